const bcrypt = require('bcryptjs');

exports.handler = async () => {
  const hash = await bcrypt.hash('correct horse', 4);
  return { format: hash.slice(0, 7), ok: await bcrypt.compare('correct horse', hash), wrong: bcrypt.compareSync('wrong', hash) };
};
