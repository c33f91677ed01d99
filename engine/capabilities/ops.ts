/**
 * Every host operation of the sandboxes, gathered by the way it crosses from the capabilities'
 * own declarations (engine/capabilities/<name>/ops.ts): the checks of the payloads, whose types the
 * guests and the host share. The host runs each check before its operation (native.ts,
 * host-ops.ts); the guests import types only. Answers and failures are one shape for all of them:
 * HostReply (engine/sandbox/protocol.ts) and HostError (errors.ts).
 */
import { CRYPTO_CALLS, HASHLIB_OPS } from './crypto/ops';
import { FETCH_BODY_OPS, FETCH_OPS } from './fetch/ops';
import { FILE_OPS, FS_CALLS } from './fs/ops';
import { INVOKE_OPS } from './invoke/ops';
import { REQUEST_BODY_OPS } from './request-body/ops';
import { object, string, type Infer } from './schema';
import { SOCKET_OPS } from './sockets/ops';
import { SUBTLE_OPS } from './subtle/ops';
import { TZDATA_OPS } from './tzdata/ops';
import { ZLIB_CALLS } from './zlib/ops';

/**
 * node8's native calls: what Node does natively on the host for its crypto, zlib and fs modules.
 * Synchronous through the `native` callback (on the host's thread, for light work), or through
 * the `nativeOffThread` reference or the `native` operation (off the host's thread).
 */
export const NATIVE_CALLS = { ...CRYPTO_CALLS, ...ZLIB_CALLS, ...FS_CALLS };
export type NativeCall = keyof typeof NATIVE_CALLS;
export type NativePayload<K extends NativeCall> = Infer<(typeof NATIVE_CALLS)[K]>;

/**
 * node8's asynchronous operations, started with `startOp` and answered once through
 * `fire(Fire.op, id, ok, payload, body?)`: an HTTP request through the egress, a read of the call's
 * request body, `sdk.invoke`, a WebCrypto operation, a TCP socket's connect, read, write or close,
 * and a native call run off the host's thread (its own payload checked as the call's), for
 * callback and promise APIs.
 */
export const NODE8_OPS = { ...FETCH_OPS, ...FETCH_BODY_OPS, ...REQUEST_BODY_OPS, ...INVOKE_OPS, ...SUBTLE_OPS, ...SOCKET_OPS, native: object({ call: string(), args: string() }) };
export type OpKind = keyof typeof NODE8_OPS;

/**
 * The operations the Python sandbox waits for: Python code is synchronous, so its thread blocks
 * (isolated-vm's applySyncPromise on the bridge's `opSync`) while the host does the work; the
 * instance's timeout still bounds the wait.
 */
export const PYTHON_OPS = { ...FETCH_OPS, ...REQUEST_BODY_OPS, ...INVOKE_OPS, ...HASHLIB_OPS, ...TZDATA_OPS, ...FILE_OPS };
export type SyncOpKind = keyof typeof PYTHON_OPS;
