const { LRUCache } = require('lru-cache');

exports.handler = () => {
  const cache = new LRUCache({ max: 2 });
  cache.set('a', 1);
  cache.set('b', 2);
  cache.get('a');
  cache.set('c', 3);
  return { keys: [...cache.keys()], hasB: cache.has('b'), size: cache.size };
};
