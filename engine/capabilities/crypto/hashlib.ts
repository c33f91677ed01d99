import { getHashes, pbkdf2Sync, scryptSync } from 'node:crypto';
import { toArrayBuffer } from '../../bytes';
import { HOST_WORK_LIMITS } from '../../host-work/limits';
import type { HostTaskAnswer } from '../../host-work/task';
import { OpError } from '../errors';
import type { OpAnswer, OpScope } from '../host-ops';
import type { Infer } from '../schema';
import { pbkdf2Refusal, pbkdf2Rounds, scryptRefusal } from './limits';
import type { HASHLIB_OPS } from './ops';

type Pbkdf2Args = Infer<(typeof HASHLIB_OPS)['pbkdf2']>;
type ScryptArgs = Infer<(typeof HASHLIB_OPS)['scrypt']>;

/** The operation as Python starts it: its payload (checked) goes to a host-work thread with the password and salt. */
export function hashlibOp(kind: 'pbkdf2' | 'scrypt') {
  return async (args: Pbkdf2Args | ScryptArgs, body: Uint8Array | undefined, scope: OpScope): Promise<OpAnswer> => {
    const answer = await scope.services.hostWork({ kind, payload: JSON.stringify(args), body: body ? body.slice().buffer : undefined });
    return { payload: answer.payload, body: answer.body ? new Uint8Array(answer.body) : undefined };
  };
}

/**
 * Python's `hashlib.pbkdf2_hmac` and `hashlib.scrypt` as host work (run on a host-work thread,
 * see engine/host-work): node8's limits, from the same table. A PBKDF2 derivation over the
 * table's rounds answers ERR_TOO_MUCH_WORK, and the sandbox computes it in the interpreter,
 * within the handler's timeout. Failures carry the code the sandbox raises by. The payload is as
 * hashlibOp checked it.
 */
export function deriveForPython(kind: 'pbkdf2' | 'scrypt', payload: string, body: ArrayBuffer | undefined): HostTaskAnswer {
  const args = JSON.parse(payload) as Pbkdf2Args & ScryptArgs;
  const bytes = body ? new Uint8Array(body) : new Uint8Array(0);
  if (args.passwordLength > bytes.length) throw fail('ERR_VALUE', 'malformed key derivation request');
  const password = bytes.subarray(0, args.passwordLength);
  const salt = bytes.subarray(args.passwordLength);
  return { payload: '', body: toArrayBuffer(kind === 'pbkdf2' ? pbkdf2(args, password, salt) : scrypt(args, password, salt)) };
}

function fail(code: string, message: string): Error {
  return new OpError(code, message);
}

/** OpenSSL's name of a hashlib name (sha3_256 is sha3-256 there). */
function opensslHash(name: string): string | undefined {
  const lower = name.toLowerCase();
  const candidates = [lower, lower.replace(/_/g, '-'), lower.replace(/^sha512_(224|256)$/, 'sha512-$1')];
  const known = new Set(getHashes());
  return candidates.find((c) => known.has(c));
}

function pbkdf2(args: Pbkdf2Args, password: Uint8Array, salt: Uint8Array): Buffer {
  const digest = opensslHash(String(args.hash));
  if (!digest) throw fail('ERR_UNSUPPORTED_HASH', `unsupported hash type ${String(args.hash)}`);
  const iterations = Number(args.iterations);
  const dklen = Number(args.dklen);
  if (!Number.isSafeInteger(iterations) || iterations < 1 || !Number.isSafeInteger(dklen) || dklen < 1) throw fail('ERR_VALUE', 'iterations and dklen must be positive integers');
  if (pbkdf2Rounds(iterations, dklen, digest) > HOST_WORK_LIMITS.pbkdf2Rounds) throw fail('ERR_TOO_MUCH_WORK', `more than ${HOST_WORK_LIMITS.pbkdf2Rounds} rounds`);
  const refusal = pbkdf2Refusal(iterations, dklen, digest, HOST_WORK_LIMITS);
  if (refusal) throw fail('ERR_VALUE', refusal);
  return pbkdf2Sync(password, salt, iterations, dklen, digest);
}

function scrypt(args: ScryptArgs, password: Uint8Array, salt: Uint8Array): Buffer {
  const [N, r, p, dklen] = [args.n, args.r, args.p, args.dklen].map(Number) as [number, number, number, number];
  const refusal = scryptRefusal(N, r, p, dklen, HOST_WORK_LIMITS);
  if (refusal) throw fail('ERR_VALUE', refusal);
  const asked = Number(args.maxmem) || 32 * 1024 * 1024;
  const maxmem = Math.min(asked, HOST_WORK_LIMITS.scryptMemoryBytes);
  try {
    return scryptSync(password, salt, dklen, { N, r, p, maxmem });
  } catch (err) {
    throw fail('ERR_VALUE', (err as Error).message);
  }
}
