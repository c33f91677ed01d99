import t from 'tap';
import { fixture, startTestServer, type TestServer } from '../helpers/server';

// UTF-8 inside node8 functions (TextDecoder, TextEncoder, Buffer), compared with Node's own as the
// control: the Encoding Standard's replacement of invalid bytes (one U+FFFD per maximal invalid
// subpart), fatal mode, characters split across streamed pieces, lone surrogates, encodeInto and
// Buffer#write never writing half a character.
let s: TestServer;
t.before(async () => {
  s = await startTestServer();
  await s.deploy('codec', fixture('text-codec'), 'handler');
});
t.teardown(() => s.stop());

const BYTES = [
  '68656c6c6f', // ASCII
  'e282ac75726f', // €uro
  'f09f9880f09f9881', // two astral characters
  'c0af', // overlong
  'e080af', // overlong, three bytes
  'eda080', // a surrogate's encoding
  'f4908080', // past U+10FFFF
  'e282', // unfinished at the end
  'f09f98', // unfinished astral
  'ff41fe42', // bytes that never start a character
  'e2e282ac', // a lead byte cut short by another
  '80bf41', // lone continuation bytes
  'c3a9c3', // é then an unfinished one
  'efbbbf6869', // a byte order mark
];
// Random bytes, weighted towards UTF-8's lead and continuation bytes.
let seed = 7;
const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
for (let n = 0; n < 40; n++) {
  const bytes = Array.from({ length: 1 + Math.floor(random() * 24) }, () => {
    const r = random();
    return r < 0.3 ? Math.floor(random() * 0x80) : r < 0.6 ? 0x80 + Math.floor(random() * 0x40) : 0xc0 + Math.floor(random() * 0x40);
  });
  BYTES.push(Buffer.from(bytes).toString('hex'));
}
const STRINGS = ['hello', 'h€llo', '😀x', 'ab😀', 'a\uD800b', '\uDC00', 'x\uD83D', 'éééé', ''];

t.test('TextDecoder and Buffer decode as Node does, whole, fatal and in streamed pieces', async (t) => {
  const out = (await s.invokeJson('codec', { bytes: BYTES, strings: STRINGS })) as {
    decoded: Record<string, string>[];
    encoded: Record<string, unknown>[];
  };
  BYTES.forEach((hex, i) => {
    const bytes = Buffer.from(hex, 'hex');
    const got = out.decoded[i]!;
    const expected = new TextDecoder().decode(bytes);
    t.equal(got.replaced, expected, `replaced ${hex}`);
    t.equal(got.pieces, expected, `streamed ${hex}`);
    let fatal: string;
    try {
      fatal = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch (err) {
      fatal = (err as Error).name;
    }
    t.equal(got.fatal, fatal, `fatal ${hex}`);
    t.equal(got.buffer, bytes.toString(), `Buffer#toString ${hex}`);
    t.equal(got.utf8Slice, bytes.subarray(1).toString(), `Buffer#utf8Slice ${hex}`);
    t.equal(got.latin1Slice, bytes.subarray(0, 3).toString('latin1'), `Buffer#latin1Slice ${hex}`);
  });
  STRINGS.forEach((text, i) => {
    const got = out.encoded[i]!;
    t.equal(got.bytes, Buffer.from(new TextEncoder().encode(text)).toString('hex'), `encode ${JSON.stringify(text)}`);
    t.equal(got.buffer, Buffer.from(text).toString('hex'), `Buffer.from ${JSON.stringify(text)}`);
    const into = new Uint8Array(5);
    const { read, written } = new TextEncoder().encodeInto(text, into);
    t.same(got.into, [read, written, Buffer.from(into.subarray(0, written)).toString('hex')], `encodeInto ${JSON.stringify(text)}`);
    const target = Buffer.alloc(7);
    const wrote = target.write(text, 1, 5);
    t.same(got.write, [wrote, target.toString('hex')], `Buffer#write ${JSON.stringify(text)}`);
    t.equal(got.length, Buffer.byteLength(text), `Buffer.byteLength ${JSON.stringify(text)}`);
  });
});

t.test('a large JSON request is read as text, never encoded and decoded in the isolate', async (t) => {
  const big = { rows: Array.from({ length: 20_000 }, (_, i) => ({ i, name: `row ${i} ✓` })) };
  await s.deploy('echo', fixture('text-codec'), 'default', { file: 'echo.mjs' });
  const res = await fetch(`${s.url}/v2/run/${s.accountId}/echo`, { method: 'POST', headers: { 'X-Service-Api-Key': s.apiKey, 'content-type': 'application/json' }, body: JSON.stringify(big) });
  t.equal(res.status, 200);
  t.same(await res.json(), { rows: 20_000, last: 'row 19999 ✓', text: JSON.stringify(big).length });
});
