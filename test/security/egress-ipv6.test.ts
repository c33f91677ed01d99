import t from 'tap';
import { isAllowedAddress, type AddressPolicy } from '../../engine/capabilities/fetch/egress-address';
import { startCountingListener, type CountingListener } from '../helpers/listener';
import { fixture, startTestServer, type TestServer } from '../helpers/server';

// Finding 10 of issue 22: `[::127.0.0.1]` (which the URL parser writes `[::7f00:1]`) passed the
// egress classifier as public unicast. Every IPv6 form that carries an IPv4 address is judged by
// that address: loopback, private and link-local ones are refused through each form, public ones
// stay allowed.

/** Each form carrying `a.b.c.d`, written as a function would put it in a URL. */
function forms(a: number, b: number, c: number, d: number): Record<string, string> {
  const hex = (x: number, y: number) => ((x << 8) | y).toString(16);
  const flip = (x: number, y: number) => (((x << 8) | y) ^ 0xffff).toString(16);
  return {
    'IPv4-mapped': `::ffff:${a}.${b}.${c}.${d}`,
    'IPv4-compatible': `::${a}.${b}.${c}.${d}`,
    'IPv4-translated': `::ffff:0:${a}.${b}.${c}.${d}`,
    '6to4': `2002:${hex(a, b)}:${hex(c, d)}::1`,
    NAT64: `64:ff9b::${a}.${b}.${c}.${d}`,
    // Teredo: server 65.54.227.120 (public), client a.b.c.d with its bits flipped.
    'Teredo client': `2001:0:4136:e378:8000:63bf:${flip(a, b)}:${flip(c, d)}`,
    'Teredo server': `2001:0:${hex(a, b)}:${hex(c, d)}:8000:63bf:f7f7:f7f7`,
  };
}

const REFUSED: [string, [number, number, number, number]][] = [
  ['loopback', [127, 0, 0, 1]],
  ['private 10/8', [10, 0, 0, 1]],
  ['private 192.168/16', [192, 168, 1, 1]],
  ['link-local (cloud metadata)', [169, 254, 169, 254]],
  ['CGNAT', [100, 64, 0, 1]],
  ['unspecified', [0, 0, 0, 0]],
];

const policy: AddressPolicy = { allowPrivate: false, selfPorts: [8080], isLocalInterface: () => false };

t.test('the classifier: every form of a refused IPv4 address is refused, every form of a public one allowed', async (t) => {
  for (const [what, v4] of REFUSED) {
    for (const [form, address] of Object.entries(forms(...v4))) t.notOk(isAllowedAddress(new URL(`http://[${address}]/`).hostname.slice(1, -1), 80, policy), `${form} of ${what}: ${address}`);
  }
  for (const [form, address] of Object.entries(forms(8, 8, 8, 8))) t.ok(isAllowedAddress(new URL(`http://[${address}]/`).hostname.slice(1, -1), 80, policy), `${form} of 8.8.8.8: ${address}`);
  t.ok(isAllowedAddress('2606:4700:4700::1111', 443, policy), 'a public IPv6 address');
  t.notOk(isAllowedAddress('64:ff9b:1::808:808', 80, policy), 'the local-use NAT64 prefix is refused whatever it carries');
  t.notOk(isAllowedAddress('::7f00:1', 8080, policy), 'not even the service itself through a translation');
  t.ok(isAllowedAddress('::1', 8080, policy), 'the service itself on its own port, as before');
  t.ok(isAllowedAddress('::ffff:127.0.0.1', 8080, policy), 'and through the mapped form, which is loopback itself');
  t.ok(isAllowedAddress('::7f00:1', 80, { ...policy, allowPrivate: true }), '--allow-private-egress allows all');
});

let s: TestServer;
let listener: CountingListener;
t.before(async () => {
  s = await startTestServer({ limits: { pythonSpare: false } });
  await s.deploy('probefetch', fixture('probes-node8'), 'probeFetch');
  listener = await startCountingListener();
});
t.teardown(async () => {
  listener.close();
  await s.stop();
});

t.test("a function's fetch to loopback and private addresses through each IPv6 form is refused", async (t) => {
  for (const [what, v4] of REFUSED) {
    for (const [form, address] of Object.entries(forms(...v4))) {
      const url = `http://[${address}]:${listener.port}/`;
      const res = await s.call('probefetch', { body: JSON.stringify({ url }) });
      t.match(await res.text(), /^"blocked: fetch failed: connections to .* are not allowed from functions/, `${form} of ${what}: ${url}`);
    }
  }
  t.equal(listener.connections, 0, 'the host listener was never reached');
});
