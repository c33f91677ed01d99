import type { ServiceError } from './errors';
import type { RequestBody } from './request-body';

/** The most each read of a chunked body takes while it is read up to the limit. */
const READ_BYTES = 1024 * 1024;

/**
 * A body still arriving, read for a runtime whose handlers take their body whole when it fits the
 * limit of a body read whole (`limit`) and as a stream past it (Python): the whole body when it
 * ends within the limit (one copy, as before), else the body as a stream, from its first byte.
 * A declared length says at once; a chunked body is read up to the limit first, and what was read
 * comes first in the stream. Rejects as the body's reads do (a client gone, the streamed limit).
 */
export async function wholeOrStream(body: RequestBody, limit: number): Promise<Buffer | RequestBody> {
  if (body.declaredBytes !== undefined) return body.declaredBytes > limit ? body : body.whole(limit);
  const read: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const chunk = await body.next(READ_BYTES);
    if (chunk === undefined) return Buffer.concat(read, size);
    read.push(chunk);
    size += chunk.byteLength;
    if (size > limit) return new PrefixedBody(read, body);
  }
}

/** A body whose first bytes were read already: they come first, then the rest as it arrives. */
class PrefixedBody implements RequestBody {
  readonly kind = 'request-body';
  readonly declaredBytes = undefined;

  constructor(
    private read: Uint8Array[],
    private readonly rest: RequestBody,
  ) {}

  get refusal(): ServiceError | undefined {
    return this.rest.refusal;
  }

  get complete(): boolean {
    return this.rest.complete;
  }

  next(maxBytes: number): Promise<Uint8Array | undefined> {
    const first = this.read[0];
    if (first === undefined) return this.rest.next(maxBytes);
    if (first.byteLength <= maxBytes) this.read.shift();
    else this.read[0] = first.subarray(maxBytes);
    return Promise.resolve(first.byteLength <= maxBytes ? first : first.subarray(0, maxBytes));
  }

  /** Past the limit already: the body's own whole read refuses it (its refusal makes the call's answer the 413). */
  whole(limit: number): Promise<Buffer> {
    this.read = [];
    return this.rest.whole(limit);
  }

  cancel(): void {
    this.read = [];
    this.rest.cancel();
  }
}
