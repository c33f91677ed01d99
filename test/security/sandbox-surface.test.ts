import t from 'tap';
import { fixture, startTestServer, type TestServer } from '../helpers/server';

// Escape probes for node8's newer surface (Node's modules, web globals, WebCrypto, streams, async
// context, the host's crypto and zlib): no host object or isolated-vm handle reaches user code, and
// host work that cannot be stopped is bounded. WebAssembly's probes are in sandbox.test.ts.
let s: TestServer;
const probes = fixture('probes-surface-node8');

t.before(async () => {
  s = await startTestServer();
  await s.deploy('objects', probes, 'objects');
  // Copying 33 MB into and out of an isolate takes seconds on a loaded machine: a timeout that load cannot reach.
  await s.deploy('bounds', probes, 'bounds', { memoryMb: 256, timeoutMs: 60_000 });
  await s.deploy('evalswap', probes, 'evalSwap');
  await s.deploy('mapgetswap', probes, 'mapGetSwap');
});
t.teardown(() => s.stop());

t.test('no host object or isolated-vm handle is reachable from streams, keys, signals, async context or the modules', async (t) => {
  const res = await s.invoke('objects');
  t.equal(res.status, 200, String(res.body));
  const out = JSON.parse(String(res.body)) as { checked: number; found: string[]; realms: boolean[]; internal: string; hostGlobals: string[] };
  t.ok(out.checked > 1000, `walked ${out.checked} objects`);
  t.same(out.found, [], 'no Reference, ExternalCopy or host object among them');
  t.ok(out.realms.every(Boolean), "every function's Function constructor is the sandbox's own");
  t.equal(out.internal, 'MODULE_NOT_FOUND', "user code cannot require what islet's libraries are given");
  t.same(out.hostGlobals, [], 'no host callbacks or library texts left on the global object');
});

t.test('host crypto and zlib are bounded in input size and in work that cannot be stopped', async (t) => {
  const res = await s.invoke('bounds');
  t.equal(res.status, 200, String(res.body));
  const out = JSON.parse(String(res.body)) as Record<string, string>;
  t.match(out['hash over the input limit'], /RangeError: ERR_OUT_OF_RANGE input of 34603008 bytes is over the limit of 33554432 bytes/);
  t.match(out['pbkdf2 iterations'], /RangeError: ERR_OUT_OF_RANGE PBKDF2 with 100000000 iterations for 32 bytes of sha512 is 100000000 HMAC rounds, over islet's limit of 4000000/);
  t.match(out['pbkdf2 callback iterations'], /over islet's limit/);
  t.match(out['rsa bits'], /RSA keys of 16384 bits are over islet's limit of 4096/);
  t.match(
    out['scrypt memory'],
    /RangeError: ERR_OUT_OF_RANGE scrypt with N=1048576, r=8 needs 1073741824 bytes of memory, over islet's limit of 67108864/,
    'scrypt memory is capped at 64 MB whatever maxmem asks',
  );
  t.match(out['subtle rsa bits'], /OperationError: .*RSA keys of 16384 bits are over islet's limit/);
  t.match(out['subtle pbkdf2 iterations'], /OperationError: .*PBKDF2 with 50000000 iterations for 32 bytes of SHA-256 is 50000000 HMAC rounds, over islet's limit of 4000000/);
  t.match(out['zlib input over the limit'], /RangeError: ERR_OUT_OF_RANGE input of 34603008 bytes is over the limit/);
  t.match(out['fs outside the folder'], /^Error: ENOENT/);
});

t.test('libraries evaluated after user code replaced eval or Map.prototype.get never hand it their require', async (t) => {
  const evalSwap = await s.invoke('evalswap');
  t.equal(evalSwap.status, 200, String(evalSwap.body));
  t.same(JSON.parse(String(evalSwap.body)), { handed: 'never', hash: '11f6ad8ec52a2984abaafd7c3b516503785c2072' }, "the runtime's own eval read the library");
  const mapGet = await s.invoke('mapgetswap');
  t.equal(mapGet.status, 200, String(mapGet.body));
  t.same(JSON.parse(String(mapGet.body)), { handed: 'never', gzipped: 21 }, "no text of user code's ran as a library");
});
