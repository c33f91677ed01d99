const Papa = require('papaparse');

exports.handler = () => {
  const result = Papa.parse('name,age\nAda,36\n"Lovelace, A",37\n', { header: true, skipEmptyLines: true, dynamicTyping: true });
  return { data: result.data, csv: Papa.unparse([{ a: 1, b: 'x,y' }]) };
};
