const { XMLParser, XMLBuilder } = require('fast-xml-parser');

exports.handler = () => {
  const parser = new XMLParser({ ignoreAttributes: false });
  const parsed = parser.parse('<root><item id="1">one</item><item id="2">two</item></root>');
  const xml = new XMLBuilder({ ignoreAttributes: false }).build({ note: { '@_lang': 'en', to: 'Ada' } });
  return { parsed, xml };
};
