const Joi = require('joi');

exports.handler = () => {
  const schema = Joi.object({ username: Joi.string().alphanum().min(3).required(), birth: Joi.number().integer().min(1900) });
  const good = schema.validate({ username: 'ada99', birth: 1985 });
  const bad = schema.validate({ username: 'a!' }, { abortEarly: false });
  return { good: good.error === undefined, details: bad.error.details.map((d) => d.type) };
};
