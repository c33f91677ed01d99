import path from 'node:path';
import t from 'tap';
import { fixture, startTestServer, type TestServer } from './helpers/server';

// The web standards and Node's shapes in node8 functions: each probe of the fixture runs in a node8
// function and under Node itself as the control; where Node is wrong by the standard (its
// windows-1252 decodes bytes 0x80-0x9F as Latin-1, its Big5 skips an invalid lead byte) or has no
// such API, the probe is compared with the standard's answer instead.
const FIXTURE = fixture('web-standards');
const { probes } = require(path.join(FIXTURE, 'function.js')) as { probes: Record<string, () => unknown> };

/** The standard's answers where Node's differ. */
const STANDARD: Record<string, unknown> = {
  windows1252: '€Ÿé',
  legacyFatal: [{ throws: 'TypeError' }, { throws: 'TypeError' }, { throws: 'TypeError' }, { throws: 'TypeError' }],
};

let s: TestServer;
let islet: Record<string, unknown>;
t.before(async () => {
  s = await startTestServer();
  await s.deploy('web', FIXTURE, 'handler');
  islet = await s.invokeJson('web', { names: Object.keys(probes) });
});
t.teardown(() => s.stop());

for (const name of Object.keys(probes)) {
  t.test(name, async (t) => {
    const expected = name in STANDARD ? STANDARD[name] : await probes[name]!();
    t.same(islet[name], expected, name in STANDARD ? 'as the standard says' : 'as under Node');
  });
}
