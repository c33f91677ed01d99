/**
 * A host-work thread (see pool.ts): runs one task at a time, synchronously where Node offers it,
 * so the work stays on this thread rather than in libuv's pool, and posts the answer back with its
 * bytes transferred. It holds no isolate and no server state: only Node's crypto and zlib.
 */
import { parentPort } from 'node:worker_threads';
import { deriveForPython } from '../capabilities/crypto/hashlib';
import { toHostError } from '../capabilities/errors';
import { runNativeWork } from '../capabilities/native';
import { subtleOp } from '../capabilities/subtle/host';
import type { HostTask, HostTaskAnswer, ThreadReply } from './task';

/** The capabilities' host-work halves, by task. */
async function run(task: HostTask): Promise<HostTaskAnswer> {
  switch (task.kind) {
    case 'native':
      return runNativeWork(task.call, task.payload, task.body);
    case 'subtle':
      return subtleOp(task.payload, task.body);
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
      const reply: ThreadReply = { ok: false, error: toHostError(err) };
      port.postMessage(reply);
    },
  );
});
