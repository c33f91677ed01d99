const Ajv = require('ajv');

exports.handler = () => {
  const ajv = new Ajv({ allErrors: true });
  const validate = ajv.compile({ type: 'object', properties: { id: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } } }, required: ['id'], additionalProperties: false });
  const good = validate({ id: 1, tags: ['a'] });
  const bad = validate({ id: 'x', extra: true });
  return { good, bad, errors: validate.errors.map((e) => `${e.instancePath}:${e.keyword}`).sort() };
};
