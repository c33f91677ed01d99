import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import t from 'tap';
import { runNode8Op } from '../../engine/capabilities/host-ops';
import type { IsolateInstance } from '../../engine/isolate/instance';
import { opScopeOf } from '../../engine/node8/bridge';
import { functionFolder } from '../helpers/functions';
import { eventually } from '../helpers/supervised';
import { startTestServer, type TestServer } from '../helpers/server';

// A request body still arriving is handed to the sandbox as an id (engine/capabilities/request-body),
// read with the bodyRead and bodyWhole operations. Ids are per instance and sequential: every
// instance numbers its bodies from 1, so a hostile tenant knows the ids another function's calls
// have. The probe is what such a tenant's sandbox could send: its operations with forged ids, while
// another function (of its own account, and of another account) has a body open under those very
// ids. Each answer is a refusal (ERR_BODY_GONE, or the payload's validation error) or the prober's
// own bytes, never a byte of the victim's body, and the victim still reads its body whole.

const KiB = 1024;
const VICTIM_BYTES = 2048 * KiB;
const VICTIM_BYTE = 0xaa;
const PROBER_BYTE = 0xbb;

/** Reads its body as a stream: how many bytes came, and whether all were the victim's mark. */
const VICTIM = `export default {
  async fetch(request) {
    let bytes = 0;
    let marked = true;
    const reader = request.body.getReader();
    for (let next = await reader.read(); !next.done; next = await reader.read()) {
      bytes += next.value.byteLength;
      if (marked && !next.value.every((b) => b === ${VICTIM_BYTE})) marked = false;
    }
    return Response.json({ bytes, marked });
  },
};`;
/** Takes its own body whole (its id stays open, with a reader waiting, until the client is done). */
const PROBER = `export default {
  async fetch(request) {
    const bytes = new Uint8Array(await request.arrayBuffer());
    return Response.json({ bytes: bytes.byteLength, own: bytes.every((b) => b === ${PROBER_BYTE}) });
  },
};`;

let s: TestServer;
let other: { accountId: string; apiKey: string };

t.before(async () => {
  s = await startTestServer();
  other = await s.createAccount();
  await s.deploy('victim', functionFolder(VICTIM), 'default', { timeoutMs: 60_000 });
  await s.deploy('prober_same', functionFolder(PROBER), 'default', { timeoutMs: 60_000 });
  await s.engine.deploy(other.accountId, { name: 'prober_other', runtime: 'node8', file: 'function.js', entrypoint: 'default', env: {}, timeoutMs: 60_000 }, { dir: functionFolder(PROBER) });
});
t.teardown(() => s.stop());

/** A POST on a connection of its own, with a declared length the test writes piece by piece. */
function upload(accountId: string, apiKey: string, name: string, length: number): { req: ClientRequest; response: Promise<IncomingMessage> } {
  const req = httpRequest(`${s.url}/v2/run/${accountId}/${name}`, {
    method: 'POST',
    agent: false,
    headers: { 'X-Service-Api-Key': apiKey, 'Content-Type': 'application/octet-stream', 'Content-Length': String(length) },
  });
  const response = new Promise<IncomingMessage>((resolve, reject) => {
    req.once('response', resolve);
    req.once('error', reject);
  });
  return { req, response };
}

async function jsonOf(res: IncomingMessage): Promise<Record<string, unknown>> {
  let text = '';
  for await (const chunk of res) text += String(chunk);
  return JSON.parse(text) as Record<string, unknown>;
}

function instanceOf(accountId: string, name: string): IsolateInstance {
  const cache = (s.engine as unknown as { pool: { cache: Map<string, { instances: IsolateInstance[] }> } }).pool.cache;
  for (const [key, group] of cache) if (key.startsWith(`${accountId}/${name}/`) && group.instances[0]) return group.instances[0];
  throw new Error(`no warm instance of ${name}`);
}

/** An instance's open request bodies by id (its table is private: read for the probe's sake). */
function openTable(instance: IsolateInstance): Map<number, { waiting: unknown }> {
  return (instance.requestBodies as unknown as { open: Map<number, { waiting: unknown }> }).open;
}
const openIds = (instance: IsolateInstance): number[] => [...openTable(instance).keys()];
const openBodies = (instance: IsolateInstance) => [...openTable(instance).values()];

/** Every byte a probe got back, as a sandbox would have received it. */
interface Outcome {
  op: string;
  id: unknown;
  code?: string;
  bytes?: Uint8Array;
}

/**
 * Sends `op` with each forged id from the prober's instance, through the scope the node8 bridge
 * gives an operation its sandbox starts (opScopeOf): what its sandbox would get back.
 */
async function probe(prober: IsolateInstance, op: 'bodyRead' | 'bodyWhole', ids: unknown[]): Promise<Outcome[]> {
  const scope = opScopeOf(prober, undefined, '0'.repeat(32));
  return Promise.all(
    ids.map(async (id): Promise<Outcome> => {
      try {
        const answer = await runNode8Op(op, JSON.stringify({ id }), undefined, scope);
        return { op, id, bytes: answer.body ?? Buffer.from(answer.payload) };
      } catch (err) {
        return { op, id, code: (err as { code?: string }).code };
      }
    }),
  );
}

t.test("forged body ids reach nothing of another function's request, of the same account or another", async (t) => {
  for (const [accountId, apiKey, name] of [
    [s.accountId, s.apiKey, 'prober_same'],
    [other.accountId, other.apiKey, 'prober_other'],
  ] as const) {
    // The victim's call runs with its body half arrived: the rest waits in the client.
    const victim = upload(s.accountId, s.apiKey, 'victim', VICTIM_BYTES);
    victim.req.write(Buffer.alloc(VICTIM_BYTES / 2, VICTIM_BYTE));
    t.ok(await eventually(() => openIds(instanceOf(s.accountId, 'victim')).length === 1, 30_000), 'the victim reads its body');
    const victimIds = openIds(instanceOf(s.accountId, 'victim'));

    // First with no body of its own open; then with one (under the same id the victim's has).
    const warm = upload(accountId, apiKey, name, 1);
    warm.req.end(Buffer.from([PROBER_BYTE]));
    t.same(await jsonOf(await warm.response), { bytes: 1, own: true }, `${name} is warm`);
    const prober = instanceOf(accountId, name);
    t.ok(prober !== instanceOf(s.accountId, 'victim'), 'another instance');
    const forged: unknown[] = [0, 1, 2, 3, 2 ** 31, 2 ** 53, -1, 1.5, Number.NaN, '1', null, ...victimIds];
    const idle = [...(await probe(prober, 'bodyRead', forged)), ...(await probe(prober, 'bodyWhole', forged))];
    for (const outcome of idle) {
      t.ok(outcome.code === 'ERR_BODY_GONE' || outcome.code === 'ERR_INVALID_ARG_TYPE', `${name}: ${outcome.op} of ${JSON.stringify(outcome.id)} refused (${outcome.code ?? 'answered'})`);
    }

    const own = upload(accountId, apiKey, name, 256 * KiB);
    own.req.write(Buffer.alloc(128 * KiB, PROBER_BYTE));
    // Probed once its handler waits for its body whole (a probe before that would only race it for its own bytes).
    t.ok(await eventually(() => openBodies(prober).some((body) => body.waiting !== undefined), 30_000), `${name} has a body of its own open, read whole`);
    // Its own id too (the victim's, on the first round: ids are per instance).
    const busyIds = [...forged, ...openIds(prober)];
    const busy = [...(await probe(prober, 'bodyRead', busyIds)), ...(await probe(prober, 'bodyWhole', busyIds))];
    for (const outcome of busy) {
      if (outcome.bytes === undefined) {
        // Its own body is being read whole by its handler: a second reader is refused.
        t.ok(['ERR_BODY_GONE', 'ERR_INVALID_ARG_TYPE', 'ERR_BAD_REQUEST'].includes(outcome.code!), `${name}, busy: ${outcome.op} of ${JSON.stringify(outcome.id)} refused (${outcome.code})`);
      } else {
        t.notOk(outcome.bytes.includes(VICTIM_BYTE), `${name}, busy: ${outcome.op} of ${JSON.stringify(outcome.id)} got no byte of the victim's`);
      }
    }

    own.req.end(Buffer.alloc(128 * KiB, PROBER_BYTE));
    t.same(await jsonOf(await own.response), { bytes: 256 * KiB, own: true }, `${name} read its own body whole`);
    victim.req.end(Buffer.alloc(VICTIM_BYTES / 2, VICTIM_BYTE));
    t.same(await jsonOf(await victim.response), { bytes: VICTIM_BYTES, marked: true }, 'the victim read every byte of its body, and only its own');
  }
});
