import type { BodyStream } from '../../body-stream';
import { ServiceError } from '../../errors';
import type { HostMemory } from '../../isolate/host-memory';
import { Fire } from '../../sandbox/protocol';
import { MAX_STREAMS, StreamOp, StreamState } from './ops';
import { RelayedBody, type RelaySource } from './relay';

/** What the streams of an instance need of it. */
export interface StreamHost {
  /** Enters the isolate with `args` for `fire` (a window granted, or a cancel). */
  fire(args: unknown[]): void;
  readonly hostMemory: HostMemory;
  /** The stream of call `callId` ended (`error`: it failed, or its reader went away). */
  ended(callId: number, error: ServiceError | undefined): void;
}

interface OpenStream {
  callId: number;
  /** Chunks that came and were not read yet, held in the instance's host memory until read. */
  chunks: Uint8Array[];
  queued: number;
  /** Bytes the sandbox may still send without being asked (granted, not yet come). */
  credit: number;
  /** The read waiting for a chunk. */
  reader: { resolve(chunk: Uint8Array | null): void; reject(err: Error): void } | undefined;
  failure: ServiceError | undefined;
  /** The sandbox's end (or failure) came: what is queued is the rest. */
  done: boolean;
}

/**
 * A window's bytes: a stream's sandbox may send this much ahead of its reader. Granted one chunk at
 * a time, a 100 MB relay entered the isolate once per chunk it asked for, about 1,600 times for
 * uWS's 64 KiB reads; granted by the MiB, the host asks again once half of it is used.
 */
const WINDOW = 1024 * 1024;

/**
 * The response bodies an instance's calls stream (at most MAX_STREAMS at once). The host pulls a
 * window at a time: the sandbox sends chunks (`chunk(key, data, state)`) until it has sent what
 * it was granted, and a read that takes a chunk grants more (`fire(Fire.stream, key,
 * StreamOp.pull, bytes)`) once less than half a window is left, so a slow client holds the
 * function's stream back by at most a window. Chunks waiting to be read count against the
 * instance's host memory; a window is at most an eighth of what is left of it.
 */
export class InstanceStreams {
  private readonly open = new Map<number, OpenStream>();
  /** Answers whose body is one the host holds, passed on without the sandbox (relay.ts), by key. */
  private readonly relays = new Map<number, { callId: number; body: RelayedBody }>();

  constructor(private readonly host: StreamHost) {}

  get size(): number {
    return this.open.size + this.relays.size;
  }

  /** A stream the sandbox opened under `key` for call `callId`; undefined when the key is taken or there are too many. */
  start(key: number, callId: number): BodyStream | undefined {
    if (!this.free(key)) return undefined;
    const stream: OpenStream = { callId, chunks: [], queued: 0, credit: 0, reader: undefined, failure: undefined, done: false };
    this.open.set(key, stream);
    return {
      kind: 'stream',
      read: () => this.read(key, stream),
      cancel: (reason) => this.cancel(key, stream, reason),
    };
  }

  /**
   * A stream the sandbox opened under `key` for call `callId` whose bytes come from `source`, a body
   * the host holds, untouched by the function; undefined (and the source given up) when the key is
   * taken or there are too many.
   */
  relay(key: number, callId: number, source: RelaySource): BodyStream | undefined {
    if (!this.free(key)) {
      // Taken from its call already: given up here, or an upstream would stay open until its timeout.
      source.cancel();
      return undefined;
    }
    const body = new RelayedBody(source, (error) => {
      this.relays.delete(key);
      // The sandbox forgets the stream; told why only when its reader went away (it cancels then).
      if (error?.code !== 'ERR_CLIENT_GONE') this.host.fire([Fire.stream, key, StreamOp.forget, '']);
      this.host.ended(callId, error);
    });
    this.relays.set(key, { callId, body });
    return body.stream((reason) => {
      this.host.fire([Fire.stream, key, StreamOp.cancel, reason]);
      body.fail(new ServiceError('ERR_CLIENT_GONE', `the client went away: ${reason}`));
    });
  }

  private free(key: number): boolean {
    return Number.isInteger(key) && !this.open.has(key) && !this.relays.has(key) && this.size < MAX_STREAMS;
  }

  /** What the sandbox sent: a chunk (text or bytes), the end, or a failure. */
  chunk(key: number, data: unknown, state: unknown, message: unknown): void {
    const stream = this.open.get(key);
    if (!stream || stream.done) return;
    if (state === StreamState.error) {
      this.finish(key, stream, new ServiceError('ERR_FUNCTION_FAILED', typeof message === 'string' ? message : 'the response stream failed'));
      return;
    }
    if (state === StreamState.end) {
      this.finish(key, stream, undefined);
      if (stream.reader && stream.chunks.length === 0) this.answer(stream, null);
      return;
    }
    const bytes = typeof data === 'string' ? Buffer.from(data) : data instanceof ArrayBuffer ? new Uint8Array(data) : undefined;
    if (bytes === undefined) {
      this.finish(key, stream, new ServiceError('ERR_BAD_RESPONSE', 'a response stream gave a chunk that is neither text nor bytes'));
      return;
    }
    stream.credit -= typeof data === 'string' ? data.length : bytes.byteLength;
    if (stream.reader) {
      this.answer(stream, bytes);
      this.grant(key, stream);
      return;
    }
    if (!this.host.hostMemory.reserve(bytes.byteLength)) {
      this.finish(key, stream, new ServiceError('ERR_RESOURCE_LIMIT', this.host.hostMemory.refusal("a response stream's chunk")));
      return;
    }
    stream.chunks.push(bytes);
    stream.queued += bytes.byteLength;
  }

  /** The call of a stream failed (its timeout, the instance's death): its stream fails with it. */
  fail(callId: number, error: ServiceError): void {
    for (const [key, stream] of this.open) if (stream.callId === callId) this.finish(key, stream, error);
    for (const relay of [...this.relays.values()]) if (relay.callId === callId) relay.body.fail(error);
  }

  failAll(error: ServiceError): void {
    for (const [key, stream] of this.open) this.finish(key, stream, error);
    for (const relay of [...this.relays.values()]) relay.body.fail(error);
  }

  private read(key: number, stream: OpenStream): Promise<Uint8Array | null> {
    if (stream.failure) return Promise.reject(stream.failure);
    if (stream.reader) return Promise.reject(new Error('one read at a time'));
    const chunk = stream.chunks.shift();
    if (chunk !== undefined) {
      stream.queued -= chunk.byteLength;
      this.host.hostMemory.release(chunk.byteLength);
      this.grant(key, stream);
      return Promise.resolve(chunk);
    }
    if (stream.done) return Promise.resolve(null);
    return new Promise((resolve, reject) => {
      stream.reader = { resolve, reject };
      this.grant(key, stream);
    });
  }

  /**
   * Grants the sandbox more once less than half a window is granted and unread: up to a window
   * ahead of the reader (an eighth of the host memory left at most), and the overdraft of a chunk
   * larger than what was granted. The sandbox keeps the same count (see response-streams.ts).
   */
  private grant(key: number, stream: OpenStream): void {
    if (stream.done) return;
    const ahead = Math.max(0, stream.credit) + stream.queued;
    if (ahead > WINDOW / 2) return;
    const memory = this.host.hostMemory;
    const want = Math.min(WINDOW - ahead, Math.floor((memory.limitBytes - memory.held) / 8));
    // Still granted some: wait for a grant worth an entry into the isolate.
    if (stream.credit > 0 && want < WINDOW / 2) return;
    // At least one byte: a grant of one is one chunk, as large as the sandbox makes it.
    const bytes = Math.max(1, want) - Math.min(0, stream.credit);
    stream.credit += bytes;
    this.host.fire([Fire.stream, key, StreamOp.pull, bytes]);
  }

  private answer(stream: OpenStream, chunk: Uint8Array | null): void {
    const reader = stream.reader!;
    stream.reader = undefined;
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
      this.host.hostMemory.release(stream.queued);
      stream.chunks.length = 0;
      stream.queued = 0;
      const reader = stream.reader;
      stream.reader = undefined;
      reader?.reject(error);
    }
    this.host.ended(stream.callId, error);
  }
}
