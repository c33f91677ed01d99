const yup = require('yup');

exports.handler = async () => {
  const schema = yup.object({ name: yup.string().required(), age: yup.number().positive().integer() });
  const value = await schema.validate({ name: 'Ada', age: '36' });
  let errors;
  try {
    await schema.validate({ age: -1 }, { abortEarly: false });
  } catch (e) {
    errors = e.errors.sort();
  }
  return { value, errors };
};
