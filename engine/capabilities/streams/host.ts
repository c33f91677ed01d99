import type { BodyStream } from '../../body-stream';
import { ServiceError } from '../../errors';
import type { HostMemory } from '../../isolate/host-memory';
import { Fire } from '../../sandbox/protocol';
import { MAX_STREAMS, StreamOp, StreamState } from './ops';

/** What the streams of an instance need of it. */
export interface StreamHost {
  /** Enters the isolate with `args` for `fire` (a pull or a cancel). */
  fire(args: unknown[]): void;
  readonly hostMemory: HostMemory;
  /** The stream of call `callId` ended (`error`: it failed, or its reader went away). */
  ended(callId: number, error: ServiceError | undefined): void;
}

interface OpenStream {
  callId: number;
  /** The chunk that came for a read not made yet (the sandbox answers each pull with one). */
  waiting: Uint8Array | null | undefined;
  /** The read waiting for the sandbox's answer. */
  reader: { resolve(chunk: Uint8Array | null): void; reject(err: Error): void } | undefined;
  /** Bytes of `waiting`, held in the instance's host memory until read. */
  held: number;
  failure: ServiceError | undefined;
  done: boolean;
}

/**
 * The response bodies an instance's calls stream (at most MAX_STREAMS at once). The host pulls:
 * each `read` asks the sandbox for one chunk (`fire(Fire.stream, key, StreamOp.pull)`), and the
 * sandbox answers with `chunk(key, data, state)`; nothing is asked while the reader has not come
 * back for more, so a slow client holds the function's stream back. A chunk waiting to be read
 * counts against the instance's host memory.
 */
export class InstanceStreams {
  private readonly open = new Map<number, OpenStream>();

  constructor(private readonly host: StreamHost) {}

  get size(): number {
    return this.open.size;
  }

  /** A stream the sandbox opened under `key` for call `callId`; undefined when the key is taken or there are too many. */
  start(key: number, callId: number): BodyStream | undefined {
    if (!Number.isInteger(key) || this.open.has(key) || this.open.size >= MAX_STREAMS) return undefined;
    const stream: OpenStream = { callId, waiting: undefined, reader: undefined, held: 0, failure: undefined, done: false };
    this.open.set(key, stream);
    return {
      kind: 'stream',
      read: () => this.read(key, stream),
      cancel: (reason) => this.cancel(key, stream, reason),
    };
  }

  /** The sandbox's answer to a pull: a chunk (text or bytes), the end, or a failure. */
  chunk(key: number, data: unknown, state: unknown, message: unknown): void {
    const stream = this.open.get(key);
    if (!stream || stream.done) return;
    if (state === StreamState.error) {
      this.finish(key, stream, new ServiceError('ERR_FUNCTION_FAILED', typeof message === 'string' ? message : 'the response stream failed'));
      return;
    }
    if (state === StreamState.end) {
      this.deliver(stream, null);
      this.finish(key, stream, undefined);
      return;
    }
    const bytes = typeof data === 'string' ? Buffer.from(data) : data instanceof ArrayBuffer ? new Uint8Array(data) : undefined;
    if (bytes === undefined) {
      this.finish(key, stream, new ServiceError('ERR_BAD_RESPONSE', 'a response stream gave a chunk that is neither text nor bytes'));
      return;
    }
    if (!this.host.hostMemory.reserve(bytes.byteLength)) {
      this.finish(key, stream, new ServiceError('ERR_RESOURCE_LIMIT', this.host.hostMemory.refusal("a response stream's chunk")));
      return;
    }
    stream.held = bytes.byteLength;
    this.deliver(stream, bytes);
  }

  /** The call of a stream failed (its timeout, the instance's death): its stream fails with it. */
  fail(callId: number, error: ServiceError): void {
    for (const [key, stream] of this.open) if (stream.callId === callId) this.finish(key, stream, error);
  }

  failAll(error: ServiceError): void {
    for (const [key, stream] of this.open) this.finish(key, stream, error);
  }

  private read(key: number, stream: OpenStream): Promise<Uint8Array | null> {
    if (stream.failure) return Promise.reject(stream.failure);
    if (stream.waiting !== undefined) {
      const chunk = stream.waiting;
      stream.waiting = undefined;
      this.release(stream);
      return Promise.resolve(chunk);
    }
    if (stream.done) return Promise.resolve(null);
    if (stream.reader) return Promise.reject(new Error('one read at a time'));
    return new Promise((resolve, reject) => {
      stream.reader = { resolve, reject };
      this.host.fire([Fire.stream, key, StreamOp.pull]);
    });
  }

  private deliver(stream: OpenStream, chunk: Uint8Array | null): void {
    const reader = stream.reader;
    if (!reader) {
      stream.waiting = chunk;
      return;
    }
    stream.reader = undefined;
    this.release(stream);
    reader.resolve(chunk);
  }

  private cancel(key: number, stream: OpenStream, reason: string): void {
    if (stream.done) return;
    this.host.fire([Fire.stream, key, StreamOp.cancel, reason]);
    this.finish(key, stream, new ServiceError('ERR_CLIENT_GONE', `the client went away: ${reason}`));
  }

  private finish(key: number, stream: OpenStream, error: ServiceError | undefined): void {
    if (stream.done) return;
    stream.done = true;
    this.open.delete(key);
    if (error) {
      stream.failure = error;
      stream.waiting = undefined;
      this.release(stream);
      const reader = stream.reader;
      stream.reader = undefined;
      reader?.reject(error);
    }
    this.host.ended(stream.callId, error);
  }

  private release(stream: OpenStream): void {
    this.host.hostMemory.release(stream.held);
    stream.held = 0;
  }
}
