import type { OpAnswer, OpScope } from '../host-ops';
import { OpError } from '../errors';
import { MOVED, type InstanceConnections } from './connections';
import type { TlsRequest } from './ops';

/**
 * The host half of functions' TCP sockets: each operation on the calling instance's own table of
 * connections (connections.ts), over the function's way out (egress.ts: the egress's rules, TLS,
 * the account's pacing). A failure keeps its code (Node's ECONNREFUSED, ETIMEDOUT…, or islet's
 * ERR_EGRESS_BLOCKED, ERR_SOCKET_…), which the guests make Node's or the Workers API's error of.
 */

/** Certificates a socket may name to trust, in all (PEM text). */
const MAX_CA_CHARS = 1024 * 1024;

function connectionsOf(scope: OpScope): InstanceConnections {
  if (!scope.connections) throw new OpError('ERR_SOCKET_UNAVAILABLE', 'TCP sockets are not available here');
  return scope.connections;
}

function checkedTls(tls: TlsRequest | undefined): TlsRequest | undefined {
  if (tls?.ca && tls.ca.reduce((n, pem) => n + pem.length, 0) > MAX_CA_CHARS) throw new OpError('ERR_INVALID_ARG_VALUE', `tls: the ca certificates are over ${MAX_CA_CHARS} characters`);
  return tls;
}

export async function connectSocket(p: { hostname: string; port: number; tls?: TlsRequest }, _body: Uint8Array | undefined, scope: OpScope): Promise<OpAnswer> {
  const opened = await connectionsOf(scope).connect(scope.requestId ?? '', p.hostname, p.port, checkedTls(p.tls), scope.services.sockets);
  return { payload: JSON.stringify(opened) };
}

export async function readSocket({ id }: { id: number }, _body: Uint8Array | undefined, scope: OpScope): Promise<OpAnswer> {
  const chunk = await connectionsOf(scope).read(id, scope.services.sockets);
  if (chunk === MOVED) return { payload: '{"moved":true}' };
  return chunk === undefined ? { payload: '{"done":true}' } : { payload: '{}', body: chunk };
}

export async function writeSocket({ id }: { id: number }, body: Uint8Array | undefined, scope: OpScope): Promise<OpAnswer> {
  if (body && body.byteLength > 0) await connectionsOf(scope).write(id, body, scope.services.sockets);
  return { payload: '{}' };
}

export async function endSocket({ id }: { id: number }, _body: Uint8Array | undefined, scope: OpScope): Promise<OpAnswer> {
  await connectionsOf(scope).end(id);
  return { payload: '{}' };
}

export async function closeSocket({ id }: { id: number }, _body: Uint8Array | undefined, scope: OpScope): Promise<OpAnswer> {
  connectionsOf(scope).close(id);
  return { payload: '{}' };
}

export async function upgradeSocket(p: { id: number; tls: TlsRequest }, _body: Uint8Array | undefined, scope: OpScope): Promise<OpAnswer> {
  const opened = await connectionsOf(scope).upgrade(p.id, checkedTls(p.tls)!, scope.services.sockets);
  return { payload: JSON.stringify(opened) };
}
