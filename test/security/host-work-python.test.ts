import { pbkdf2Sync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import t from 'tap';
import { HOST_WORK_LIMITS } from '../../engine/host-work/limits';
import { removeDir, startTestServer, type TestServer } from '../helpers/server';

// Python's hashlib derivations run as host work under the same table as node8's crypto
// (engine/host-work/limits.ts): host-work.test.ts checks node8's side; this file checks that a
// Python function meets the same numbers. A PBKDF2 derivation over the table's HMAC rounds is
// refused by the host (ERR_TOO_MUCH_WORK, naming the limit) and hashlib then derives it in the
// interpreter within the handler's timeout, so the host's answer is read through the sandbox's own
// operation; a key over the table's output bytes is refused to the user with a ValueError naming it.

const FUNCTION = `
import hashlib
import json
import sys


def _attempt(fn):
    try:
        return {'ok': True, 'value': fn()}
    except BaseException as exc:
        return {'ok': False, 'error': '%s: %s' % (type(exc).__name__, exc), 'code': getattr(exc, 'code', None)}


def _host_pbkdf2(iterations, dklen):
    request = {'hash': 'sha256', 'iterations': iterations, 'dklen': dklen, 'passwordLength': 8}
    return len(sys.modules['_islet_stdlib'].host_op('pbkdf2', json.dumps(request), b'password' + b'salt')[1])


def handler(body, req):
    args = body
    n = args['iterations']
    return {
        'hashlib_within': _attempt(lambda: hashlib.pbkdf2_hmac('sha256', b'password', b'salt', n, 32).hex()),
        'host_within': _attempt(lambda: _host_pbkdf2(n, 32)),
        'host_over': _attempt(lambda: _host_pbkdf2(n, 64)),
        'hashlib_long_key': _attempt(lambda: len(hashlib.pbkdf2_hmac('sha256', b'password', b'salt', 1, args['keyBytes']))),
    }
`;

type Attempt = { ok: boolean; value?: unknown; error?: string; code?: string | null };

let s: TestServer;
let folder: string;

t.before(async () => {
  folder = mkdtempSync(path.join(tmpdir(), 'islet-host-work-python-'));
  writeFileSync(path.join(folder, 'function.py'), FUNCTION);
  s = await startTestServer();
  // 2,000,001 SHA-256 rounds take about a second of a core; a loaded machine gets a minute.
  await s.deployPython('kdf', folder, 'handler', { timeoutMs: 60_000 });
});
t.teardown(async () => {
  await s.stop();
  removeDir(folder);
});

t.test("Python's PBKDF2 meets the host-work table's limits, as node8's does", async (t) => {
  const limit = HOST_WORK_LIMITS.pbkdf2Rounds;
  // One 32-byte SHA-256 block is one round per iteration, two blocks are two: half the limit plus
  // one iteration is within it for a 32-byte key and over it for a 64-byte one.
  const iterations = limit / 2 + 1;
  const keyBytes = HOST_WORK_LIMITS.outputBytes + 1;
  const res = await s.call('kdf', { body: JSON.stringify({ iterations, keyBytes }) });
  const text = await res.text();
  t.equal(res.status, 200, res.status === 200 ? 'the call answers' : text);
  const out = JSON.parse(text) as Record<string, Attempt>;

  t.same(out.host_within, { ok: true, value: 32 }, `${iterations} rounds (within ${limit}): the host derives the key`);
  t.equal(out.hashlib_within?.value, pbkdf2Sync('password', 'salt', iterations, 32, 'sha256').toString('hex'), "hashlib.pbkdf2_hmac within the limit gives Node's key");

  t.equal(out.host_over?.ok, false, `${iterations * 2} rounds: the host refuses`);
  t.equal(out.host_over?.code, 'ERR_TOO_MUCH_WORK');
  t.match(out.host_over?.error, new RegExp(`more than ${limit} rounds`), "the refusal names the table's limit");

  t.equal(out.hashlib_long_key?.ok, false, `a key of ${keyBytes} bytes is refused`);
  t.match(out.hashlib_long_key?.error, new RegExp(`^ValueError: a PBKDF2 key of ${keyBytes} bytes is over islet's limit of ${HOST_WORK_LIMITS.outputBytes} bytes`));
});
