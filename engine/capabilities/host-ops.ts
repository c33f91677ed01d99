/**
 * The host halves of the operations the sandboxes start (declared in ops.ts): node8's
 * asynchronous operations and Python's synchronous ones, each answered by its capability's host
 * half. The runtimes' bridges (engine/node8/bridge.ts, python/bridge.ts) dispatch over these and
 * nothing else: here the payload is parsed and checked against its declaration before any work,
 * and a failure is thrown, for the bridge to send as a HostError (errors.ts).
 */
import type { HostMemoryBudget } from '../isolate/host-memory';
import type { EgressBodies } from './fetch/bodies';
import type { InstanceServices } from '../runtime';
import { hashlibOp } from './crypto/hashlib';
import { OpError } from './errors';
import { cancelEgressBody, fetchForNode8, fetchForPython, readEgressBody } from './fetch/host';
import { readFunctionFile, type FunctionFiles } from './fs/host';
import { invokeFunction } from './invoke/host';
import { cancelRequestBody, readRequestBody, readWholeRequestBody, type RequestBodies } from './request-body/host';
import { runNativeOffThread } from './native';
import { NODE8_OPS, PYTHON_OPS } from './ops';
import type { Check, Infer } from './schema';
import type { InstanceConnections } from './sockets/connections';
import { closeSocket, connectSocket, endSocket, readSocket, upgradeSocket, writeSocket } from './sockets/host';
import { runSubtle } from './subtle/host';
import { readZone } from './tzdata/host';

/** What an operation answers: JSON text, and bytes when it has a body. */
export interface OpAnswer {
  payload: string;
  body?: Uint8Array | undefined;
  /**
   * The body's memory is the operation's own and nothing else holds it (a request body's chunk):
   * it is moved into the isolate, not copied (a 100 MB relay copied each chunk twice on its way in).
   */
  transfer?: boolean;
}

/** What an operation of one instance may reach: its services (once it is a function), its host memory, its files. */
export interface OpScope {
  services: InstanceServices;
  hostMemory: HostMemoryBudget | undefined;
  files: FunctionFiles | undefined;
  /** Response bodies of the instance's fetches still arriving (node8 reads them chunk by chunk). */
  egressBodies?: EgressBodies;
  /** Request bodies its calls are still reading from their clients (node8; Python's past the limit of a body read whole). */
  requestBodies?: RequestBodies;
  /** The handler's timeout, which Python's operations may not outlast (node8's are bounded by the instance). */
  timeoutMs?: number;
  /** The instance's TCP sockets (node8). */
  connections?: InstanceConnections;
  /** The request the sandbox says started the operation (untrusted: a socket's owner is checked against the calls running). */
  requestId?: string;
}

type Handlers<C extends Record<string, Check<unknown>>> = { [K in keyof C]: (payload: Infer<C[K]>, body: Uint8Array | undefined, scope: OpScope) => Promise<OpAnswer> };

const NODE8_HOSTS: Handlers<typeof NODE8_OPS> = {
  fetch: fetchForNode8,
  fetchRead: readEgressBody,
  fetchCancel: cancelEgressBody,
  bodyRead: readRequestBody,
  bodyWhole: readWholeRequestBody,
  bodyCancel: cancelRequestBody,
  invoke: invokeFunction,
  subtle: runSubtle,
  tcpConnect: connectSocket,
  tcpRead: readSocket,
  tcpWrite: writeSocket,
  tcpEnd: endSocket,
  tcpClose: closeSocket,
  tcpUpgrade: upgradeSocket,
  native: async ({ call, args }, body, scope) => {
    const answer = await runNativeOffThread(call, args, body ? body.slice().buffer : undefined, scope.files ?? NO_FILES, scope.services);
    return { payload: answer.payload, body: answer.body ? new Uint8Array(answer.body) : undefined };
  },
};

const PYTHON_HOSTS: Handlers<typeof PYTHON_OPS> = {
  fetch: fetchForPython,
  bodyRead: readRequestBody,
  bodyWhole: readWholeRequestBody,
  bodyCancel: cancelRequestBody,
  invoke: invokeFunction,
  pbkdf2: hashlibOp('pbkdf2'),
  scrypt: hashlibOp('scrypt'),
  tzdata: readZone,
  file: (p, _body, scope) => readFunctionFile(p, scope.files),
};

/** Operations that need no function (the Python runtime's boot reads the time zones). */
const WITHOUT_FUNCTION = new Set(['tzdata', 'file']);

const NO_FILES: FunctionFiles = { codeDir: '/nonexistent', files: new Set() };

async function run<C extends Record<string, Check<unknown>>>(
  checks: C,
  hosts: Handlers<C>,
  kind: unknown,
  json: unknown,
  body: Uint8Array | undefined,
  scope: Omit<OpScope, 'services'> & { services: InstanceServices | undefined },
): Promise<OpAnswer> {
  if (typeof kind !== 'string' || !Object.prototype.hasOwnProperty.call(checks, kind)) throw new OpError('ERR_UNKNOWN_OP', `unknown operation ${String(kind)}`);
  if (!scope.services && !WITHOUT_FUNCTION.has(kind)) throw new OpError('ERR_NOT_READY', 'the function is not loaded yet');
  let raw: unknown;
  try {
    raw = typeof json === 'string' ? JSON.parse(json) : undefined;
  } catch {
    raw = undefined;
  }
  const payload = (checks[kind] as Check<unknown>)(raw, kind);
  return (hosts[kind] as (p: unknown, b: Uint8Array | undefined, s: OpScope) => Promise<OpAnswer>)(payload, body, scope as OpScope);
}

/** One of node8's asynchronous operations. */
export function runNode8Op(kind: unknown, json: unknown, body: Uint8Array | undefined, scope: OpScope): Promise<OpAnswer> {
  return run(NODE8_OPS, NODE8_HOSTS, kind, json, body, scope);
}

/** One of the operations Python waits for; before the isolate is a function, only those that need none. */
export function runPythonOp(kind: unknown, json: unknown, body: Uint8Array | undefined, scope: Omit<OpScope, 'services'> & { services: InstanceServices | undefined }): Promise<OpAnswer> {
  return run(PYTHON_OPS, PYTHON_HOSTS, kind, json, body, scope);
}
