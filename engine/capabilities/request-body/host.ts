import { textIfUtf8 } from '../../bytes';
import type { RequestBody } from '../../request-body';
import { OpError } from '../errors';
import type { OpAnswer, OpScope } from '../host-ops';
import type { RelaySource } from '../streams/relay';
import { BODY_READ_BYTES } from './ops';

/**
 * The request bodies an instance's calls are reading, by the id the sandbox got for each in place
 * of its bytes. A body is the call's: it is forgotten (and what is left of it not read) when the
 * call ends. A whole read is held to `wholeLimit`, the operator's limit of a body read whole.
 */
export class RequestBodies {
  private readonly open = new Map<number, RequestBody>();
  private next = 1;

  constructor(private readonly wholeLimit: number) {}

  add(body: RequestBody): number {
    const id = this.next++;
    this.open.set(id, body);
    return id;
  }

  /** The call of body `id` ended: it is read no more. */
  forget(id: number): void {
    const body = this.open.get(id);
    if (!body) return;
    this.open.delete(id);
    body.cancel();
  }

  /**
   * Body `id` as a relay's source (an answer passes it on untouched): no longer read through the
   * sandbox, and given up by the relay, not by its call's end.
   */
  take(id: number): RelaySource {
    const body = this.body(id);
    this.open.delete(id);
    return { next: () => body.next(BODY_READ_BYTES), cancel: () => body.cancel(), release: (chunk) => body.release?.(chunk) };
  }

  forgetAll(): void {
    for (const id of [...this.open.keys()]) this.forget(id);
  }

  read(id: number): Promise<Uint8Array | undefined> {
    return this.body(id).next(BODY_READ_BYTES);
  }

  whole(id: number): Promise<Buffer> {
    return this.body(id).whole(this.wholeLimit);
  }

  private body(id: number): RequestBody {
    const body = this.open.get(id);
    if (!body) throw new OpError('ERR_BODY_GONE', 'the request body is gone: its call has ended');
    return body;
  }
}

export async function readRequestBody({ id }: { id: number }, _body: Uint8Array | undefined, scope: OpScope): Promise<OpAnswer> {
  const chunk = await bodiesOf(scope).read(id);
  // A chunk is the body's own copy of what uWS handed over, held by nothing else once read: moved.
  return chunk === undefined ? { payload: '{"done":true}' } : { payload: '{}', body: chunk, transfer: true };
}

/** The whole body: as text (one decoding, on the host) when it is UTF-8, which is what json() and text() take. */
export async function readWholeRequestBody({ id }: { id: number }, _body: Uint8Array | undefined, scope: OpScope): Promise<OpAnswer> {
  const all = await bodiesOf(scope).whole(id);
  if (all.byteLength === 0) return { payload: '' };
  const text = textIfUtf8(all);
  return text !== undefined ? { payload: text } : { payload: '', body: all, transfer: true };
}

export async function cancelRequestBody({ id }: { id: number }, _body: Uint8Array | undefined, scope: OpScope): Promise<OpAnswer> {
  scope.requestBodies?.forget(id);
  return { payload: '{}' };
}

function bodiesOf(scope: OpScope): RequestBodies {
  if (!scope.requestBodies) throw new OpError('ERR_BODY_GONE', 'this instance reads no request bodies');
  return scope.requestBodies;
}
