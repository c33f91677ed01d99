import path from 'node:path';
import t from 'tap';
import { fixture, startTestServer, type TestServer } from '../helpers/server';
import { eventually } from '../helpers/supervised';

// The web standards and Node's shapes in node8 functions: each probe of the fixture runs in a node8
// function and under Node itself as the control; where Node 20 is wrong by the standard (its
// windows-1252 decodes bytes 0x80-0x9F as Latin-1, its Big5 skips an invalid lead byte, its
// DecompressionStream takes data after the end, its AbortSignal.any marks dependents aborted late,
// its structuredClone makes a File a Blob, its Response.clone() shares chunks) or has no such API (the global's addEventListener), the
// probe is compared with the standard's answer instead (or islet's own, for what a sandbox cannot do).
const FIXTURE = fixture('web-standards');
const { probes } = require(path.join(FIXTURE, 'function.js')) as { probes: Record<string, () => unknown> };

/** The standard's answers where Node's differ. */
const STANDARD: Record<string, unknown> = {
  windows1252: '€Ÿé',
  legacyFatal: [{ throws: 'TypeError' }, { throws: 'TypeError' }, { throws: 'TypeError' }, { throws: 'TypeError' }],
  decompressJunk: [0, 1, 2].map(() => [{ throws: 'TypeError' }, { throws: 'TypeError' }]),
  // Not the standard's to say: islet gives compressed output before the input ends (Node holds it all).
  compressEarly: true,
  abortAnyOrder: [['a1 true', 'a2', 'any', 'nested'], 'why', 'why'],
  cloneBlob: [true, 'abc', 'text/x', true, 'f.txt', 7, 'de'],
  globalEvents: ['function', 'ping'],
  // Node 20's DecompressionStream never answers a read when junk follows the data (WPT's decompression-extra-input times out).
  compressionDetails: ['RangeError', '61', 'TypeError'],
  // Node 20's clone() tees without copying the chunks (the standard's cloneForBranch2): its branches share each chunk.
  responseAfterRead: [true, { throws: 'TypeError' }, { throws: 'TypeError' }, { throws: 'TypeError' }, true, [1, 2]],
  // islet's own answer: TLS servers cannot be made, and making one says so (clients: test/sockets.test.ts).
  tlsUse: ['ERR_METHOD_NOT_IMPLEMENTED', 'tls.createServer is not available in islet functions'],
};

let s: TestServer;
let islet: Record<string, unknown>;
t.before(async () => {
  s = await startTestServer();
  // Room for a probe or two that never answer (each fails alone after 20 s, see the fixture).
  await s.deploy('web', FIXTURE, 'handler', { timeoutMs: 60_000 });
  islet = await s.invokeJson('web', { names: Object.keys(probes) });
});
t.teardown(() => s.stop());

for (const name of Object.keys(probes)) {
  t.test(name, async (t) => {
    const expected = name in STANDARD ? STANDARD[name] : await probes[name]!();
    t.same(islet[name], expected, name in STANDARD ? 'as the standard says' : 'as under Node');
  });
}

t.test("console.log of a 1e6-item array prints its first 100 items and '... 999900 more items', as Node", async (t) => {
  t.equal(islet.consoleBigArray, 'logged');
  let line: string | undefined;
  t.ok(
    await eventually(async () => {
      line = (await s.engine.readLogs(s.accountId, 'web', {})).map((e) => e.message).find((m) => m.startsWith('[ 7, 7'));
      return line !== undefined;
    }, 10_000),
    'the line is in the logs',
  );
  t.ok(line!.endsWith('7, ... 999900 more items ]'), line!.slice(-60));
  t.equal(line!.match(/7/g)!.length, 100, '100 items, then the count');
});
