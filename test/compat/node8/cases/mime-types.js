const mime = require('mime-types');

exports.handler = () => ({ json: mime.lookup('data.json'), html: mime.contentType('html'), ext: mime.extension('image/png'), unknown: mime.lookup('x.unknownext') });
