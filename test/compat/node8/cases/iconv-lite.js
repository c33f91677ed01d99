const iconv = require('iconv-lite');

exports.handler = () => {
  const latin = iconv.encode('café €', 'win1252');
  return { bytes: Array.from(latin), back: iconv.decode(latin, 'win1252'), utf16: iconv.decode(iconv.encode('ok', 'utf16le'), 'utf16le'), exists: iconv.encodingExists('shift_jis') };
};
