const ExcelJS = require('exceljs');

// exceljs reads and writes its zip through readable-stream 2 and 3 (archiver, unzipper), which build
// on require('stream') being Node's Stream.
exports.handler = async () => {
  const book = new ExcelJS.Workbook();
  const sheet = book.addWorksheet('Sales');
  sheet.columns = [
    { header: 'Item', key: 'item' },
    { header: 'Qty', key: 'qty' },
  ];
  sheet.addRow({ item: 'apples', qty: 3 });
  sheet.addRow({ item: 'pears', qty: 5 });
  sheet.getCell('B4').value = { formula: 'SUM(B2:B3)', result: 8 };
  const buffer = await book.xlsx.writeBuffer();

  const back = new ExcelJS.Workbook();
  await back.xlsx.load(buffer);
  const read = back.getWorksheet('Sales');
  return {
    zipMagic: Buffer.from(buffer).subarray(0, 2).toString('latin1'),
    sheets: back.worksheets.map((s) => s.name),
    a3: read.getCell('A3').value,
    b2: read.getCell('B2').value,
    b4: read.getCell('B4').value,
    rows: read.rowCount,
  };
};
