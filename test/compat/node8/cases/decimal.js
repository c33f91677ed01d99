const Decimal = require('decimal.js');

exports.handler = () => ({
  sum: new Decimal('0.1').plus('0.2').toString(),
  pow: new Decimal(2).pow(100).toFixed(),
  div: new Decimal(1).div(3).toSignificantDigits(10).toString(),
});
