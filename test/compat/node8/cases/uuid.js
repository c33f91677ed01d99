const { v4, v5, validate, version } = require('uuid');

exports.handler = () => {
  const id = v4();
  return { valid: validate(id), version: version(id), v5: v5('islet', v5.URL), distinct: v4() !== id };
};
