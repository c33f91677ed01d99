const ms = require('ms');

exports.handler = () => ({ day: ms('1d'), mixed: ms('2.5 hrs'), back: ms(60000), long: ms(3600000, { long: true }) });
