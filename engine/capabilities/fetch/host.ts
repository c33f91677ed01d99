import type { OpAnswer, OpScope } from '../host-ops';
import { OpError } from '../errors';
import type { FetchRequest } from './ops';

/**
 * The host half of fetch: one HTTP exchange through the guarded egress (egress.ts, the engine's
 * `services.fetch`), its response body taken from the instance's host memory as it arrives.
 * Failures keep the egress's code (ERR_EGRESS_BLOCKED…): node8's fetch shows their message in a
 * TypeError, Python's sockets raise the OSError each code stands for.
 */

/** The largest request body a Python function may send (net.py refuses larger ones before they leave). */
export const MAX_REQUEST_BODY = 32 * 1024 * 1024;

/** node8's fetch and http.request. */
export function fetchForNode8(request: FetchRequest, body: Uint8Array | undefined, scope: OpScope): Promise<OpAnswer> {
  return scope.services.fetch(request, body, scope.hostMemory, scope.egressBodies?.keeperFor(scope.requestId ?? ''));
}

/** The next chunk of a body still arriving, or `{"done":true}` at its end. */
export async function readEgressBody({ id }: { id: number }, _body: Uint8Array | undefined, scope: OpScope): Promise<OpAnswer> {
  const chunk = await scope.egressBodies?.read(id);
  return chunk === undefined ? { payload: '{"done":true}' } : { payload: '{}', body: chunk };
}

export async function cancelEgressBody({ id }: { id: number }, _body: Uint8Array | undefined, scope: OpScope): Promise<OpAnswer> {
  scope.egressBodies?.cancel(id);
  return { payload: '{}' };
}

/**
 * One HTTP exchange of a Python socket. Redirects come back as they are (http.client does not
 * follow them; urllib and requests do, and each hop comes through here again and is checked
 * again). The timeout is the socket's, never more than the handler's.
 */
export function fetchForPython(request: FetchRequest, body: Uint8Array | undefined, scope: OpScope): Promise<OpAnswer> {
  if (body && body.byteLength > MAX_REQUEST_BODY) throw new OpError('ERR_EGRESS_TOO_LARGE', `the request body is larger than ${MAX_REQUEST_BODY} bytes`);
  const limit = scope.timeoutMs ?? Infinity;
  const timeoutMs = Math.min(request.timeoutMs ?? limit, limit);
  return scope.services.fetch({ ...request, redirect: 'manual', timeoutMs }, body, scope.hostMemory);
}
