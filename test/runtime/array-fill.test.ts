import t from 'tap';
import { functionFolder } from '../helpers/functions';
import { startTestServer, type TestServer } from '../helpers/server';

// Array.prototype.fill runs in slices inside functions (engine/node8/sandbox/sliced-fill.ts), so that
// the memory limit can stop it between them. What it does must stay the specification's: each case
// runs in a function and in this process (Node's own fill), and the two must agree.
const CASES = `[
  () => new Array(5).fill(7),
  () => [1, 2, 3, 4, 5].fill(0, 1, 3),
  () => [1, 2, 3, 4, 5].fill(0, -2),
  () => [1, 2, 3, 4, 5].fill(0, -9, -1),
  () => [1, 2, 3, 4, 5].fill(0, NaN, Infinity),
  () => [1, 2, 3, 4, 5].fill(0, '1', '4.9'),
  () => [1, 2, 3, 4, 5].fill(0, 3, 1),
  () => { const a = new Array(200000).fill(1, 10, 150000); return [a.length, a.indexOf(1), a.lastIndexOf(1), a[9], a[150000], a.reduce((n, v) => n + v, 0)]; },
  () => { const a = new Array(300000).fill(2, -100000); return [a.indexOf(2), a.lastIndexOf(2), a.filter(() => true).length]; },
  () => { const a = new Array(300000).fill(3, -Infinity, -299990); return [a.indexOf(3), a.lastIndexOf(3)]; },
  () => { const o = { length: 100000 }; const r = Array.prototype.fill.call(o, 'x', 99998); return [r === o, o[99997], o[99998], o[99999], o[100000]]; },
  () => { const o = { length: 3 }; Array.prototype.fill.call(o, 1); return o; },
  () => { const a = new Array(100000); return a.fill(a) === a && a[99999] === a; },
  () => { try { Array.prototype.fill.call('ab', 0); return 'no error'; } catch (e) { return e.constructor.name; } },
  () => { try { Array.prototype.fill.call(null, 1); return 'no error'; } catch (e) { return e.constructor.name; } },
  () => { try { new Array(100000).fill(0, 1n); return 'no error'; } catch (e) { return e.constructor.name; } },
  () => { const seen = []; new Array(100000).fill(0, { valueOf() { seen.push('start'); return 1; } }, { valueOf() { seen.push('end'); return 5; } }); return seen; },
  () => { const [O, M] = [globalThis.Object, globalThis.Math]; globalThis.Object = () => ({ length: 0 }); globalThis.Math = {}; try { return new Array(100000).fill(4).lastIndexOf(4); } finally { globalThis.Object = O; globalThis.Math = M; } },
  () => [Array.prototype.fill.length, Array.prototype.fill.name, Object.keys([]).includes('fill'), Object.getOwnPropertyDescriptor(Array.prototype, 'fill').enumerable],
]`;

t.test('fill inside a function does what Node’s own does, small arrays and large, arrays and array-likes', async (t) => {
  const s: TestServer = await startTestServer();
  t.teardown(() => s.stop());
  await s.deploy('fill', functionFolder(`exports.handler = () => ${CASES}.map((run) => run());\n`), 'handler');
  const res = await s.call('fill');
  t.equal(res.status, 200);
  const inFunction = JSON.parse(await res.text()) as unknown[];
  // biome-ignore lint/security/noGlobalEval: the same cases, run by Node's own fill
  const expected = (eval(CASES) as (() => unknown)[]).map((run) => JSON.parse(JSON.stringify(run()) ?? 'null'));
  t.equal(inFunction.length, expected.length);
  for (let i = 0; i < expected.length; i++) t.same(inFunction[i], expected[i], `case ${i + 1}`);
});
