const createDebug = require('debug');

exports.handler = () => {
  createDebug.enable('app:*');
  const log = createDebug('app:compat');
  const other = createDebug('other');
  log('a debug line %o', { x: 1 });
  return { enabled: log.enabled, otherEnabled: other.enabled, namespace: log.namespace };
};
