import t from 'tap';
import { textIfUtf8, utf8Text } from '../../engine/bytes';

// Bodies become text on the host: ASCII as Latin-1 (the same characters), other UTF-8 decoded,
// and bytes that are not UTF-8 stay bytes.
t.test('text of UTF-8 bytes', async (t) => {
  for (const text of ['', 'hello', '{"a":[1,2,3]}', 'é ü ñ', '— € ✓', '😀 and 𝄞', 'x'.repeat(2_000_000) + 'é']) {
    const bytes = Buffer.from(text, 'utf8');
    t.equal(utf8Text(bytes), text, `utf8Text: ${JSON.stringify(text.slice(0, 12))}`);
    t.equal(textIfUtf8(bytes), text, `textIfUtf8: ${JSON.stringify(text.slice(0, 12))}`);
  }
});

t.test('bytes that are not UTF-8 have no text', async (t) => {
  for (const bytes of [Buffer.from([0xff, 0xfe, 0x00]), Buffer.from([0x61, 0xc3]), Buffer.from([0xe9, 0x74, 0xe9]), Buffer.from([0xed, 0xa0, 0x80])]) {
    t.equal(textIfUtf8(bytes), undefined, bytes.toString('hex'));
  }
});
