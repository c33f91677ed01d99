const yaml = require('js-yaml');

exports.handler = () => {
  const doc = yaml.load('name: islet\nlist:\n  - 1\n  - two\nnested: { a: true }\n');
  return { doc, dumped: yaml.dump({ b: [1, 2], a: 'x' }, { sortKeys: true }) };
};
