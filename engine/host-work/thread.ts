/**
 * A host-work thread (see pool.ts): runs one task at a time, synchronously where Node offers it,
 * so the work stays on this thread rather than in libuv's pool, and posts the answer back with its
 * bytes transferred. It holds no isolate and no server state: only Node's crypto and zlib.
 */
import { parentPort } from 'node:worker_threads';
import { toArrayBuffer } from '../bytes';
import { deriveForPython } from '../capabilities/crypto/hashlib';
import { runNativeWork } from '../node8/host/native';
import { subtleOp } from '../capabilities/subtle/host';
import type { HostTask, HostTaskAnswer, ThreadReply } from './task';

async function run(task: HostTask): Promise<HostTaskAnswer> {
  switch (task.kind) {
    case 'native':
      return runNativeWork(task.call, task.payload, task.body);
    case 'subtle': {
      const answer = await subtleOp(task.payload, task.body ? new Uint8Array(task.body) : undefined);
      return { payload: answer.payload, body: answer.body ? toArrayBuffer(answer.body) : undefined };
    }
    case 'pbkdf2':
    case 'scrypt':
      return deriveForPython(task.kind, task.payload, task.body);
    default:
      throw new Error(`unknown host task ${String((task as { kind: unknown }).kind)}`);
  }
}

const port = parentPort!;
port.on('message', (task: HostTask) => {
  run(task).then(
    (answer) => {
      const reply: ThreadReply = { ok: true, payload: answer.payload, body: answer.body };
      port.postMessage(reply, answer.body ? [answer.body] : []);
    },
    (err: unknown) => {
      const e = err as Error & { code?: unknown };
      const reply: ThreadReply = { ok: false, message: e instanceof Error ? e.message : String(err), ...(typeof e?.code === 'string' ? { code: e.code } : {}) };
      port.postMessage(reply);
    },
  );
});
