const pino = require('pino');

// pino 10 traces each log call through diagnostics_channel (tracingChannel('pino_asJson').traceSync).
exports.handler = async () => {
  const lines = [];
  const destination = { write: (line) => lines.push(line) };
  const logger = pino({ base: { service: 'compat' }, timestamp: false }, destination);
  logger.info({ user: 'ada' }, 'hello %s', 'pino');
  logger.child({ requestId: 7 }).warn('careful');
  logger.debug('below the level: not written');
  logger.error(new Error('boom'));
  return lines.map((line) => {
    const entry = JSON.parse(line);
    if (entry.err) entry.err.stack = entry.err.stack.split('\n')[0];
    return entry;
  });
};
