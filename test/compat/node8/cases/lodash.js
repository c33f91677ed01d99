const _ = require('lodash');

exports.handler = () => ({
  chunk: _.chunk([1, 2, 3, 4, 5], 2),
  grouped: _.groupBy(['one', 'two', 'three'], 'length'),
  merged: _.merge({ a: { b: 1 } }, { a: { c: 2 } }),
  template: _.template('Hello <%= name %>!')({ name: 'Ada' }),
  camel: _.camelCase('Foo Bar-baz'),
});
