const validator = require('validator');

exports.handler = () => ({
  email: validator.isEmail('ada@example.com'),
  notEmail: validator.isEmail('ada@'),
  uuid: validator.isUUID('9b2b5d5e-7e0f-4c5e-9a43-6f1a7a7a0b1c', 4),
  escaped: validator.escape('<a href="x">'),
  ip: validator.isIP('10.0.0.1'),
});
