// `Readable.fromWeb`/`toWeb`, `Writable.fromWeb`/`toWeb` and `Duplex.fromWeb`/`toWeb`, which
// readable-stream declares but leaves to Node's internals (its adapters object is empty). Shaped as
// Node's lib/internal/webstreams/adapters.js: the web side's backpressure is the Node side's
// highWaterMark, an error on one side destroys or errors the other, and destroying cancels.

interface NodeReadable {
  push(chunk: unknown): boolean;
  destroy(err?: unknown): void;
  pause(): void;
  resume(): void;
  on(event: string, listener: (...args: unknown[]) => void): void;
}
interface NodeWritable {
  write(chunk: unknown, callback: (err?: unknown) => void): boolean;
  end(callback: () => void): void;
  destroy(err?: unknown): void;
}
type Callback = (err?: unknown) => void;
type Ctor<T> = new (options: Record<string, unknown>) => T;
interface WebReader {
  read(): Promise<{ done: boolean; value?: unknown }>;
  cancel(reason?: unknown): Promise<void>;
}
interface WebWriter {
  ready: Promise<void>;
  write(chunk: unknown): Promise<void>;
  close(): Promise<void>;
  abort(reason?: unknown): Promise<void>;
}
interface WebReadable {
  getReader(): WebReader;
}
interface WebWritable {
  getWriter(): WebWriter;
}
interface AdapterOptions {
  objectMode?: boolean;
  highWaterMark?: number;
  encoding?: string;
  signal?: unknown;
  decodeStrings?: boolean;
  strategy?: unknown;
}

function readableOptions(reader: WebReader, options: AdapterOptions = {}): Record<string, unknown> {
  let reading = false;
  return {
    objectMode: options.objectMode ?? false,
    highWaterMark: options.highWaterMark,
    encoding: options.encoding,
    signal: options.signal,
    read(this: NodeReadable) {
      if (reading) return;
      reading = true;
      reader.read().then(
        ({ done, value }) => {
          reading = false;
          this.push(done ? null : value);
        },
        (err: unknown) => this.destroy(err),
      );
    },
    destroy(err: unknown, callback: Callback) {
      reader.cancel(err ?? undefined).then(
        () => callback(err),
        () => callback(err),
      );
    },
  };
}

function writableOptions(writer: WebWriter, options: AdapterOptions = {}): Record<string, unknown> {
  return {
    objectMode: options.objectMode ?? false,
    highWaterMark: options.highWaterMark,
    decodeStrings: options.decodeStrings ?? true,
    signal: options.signal,
    write(chunk: unknown, _encoding: string, callback: Callback) {
      writer.ready.then(() => writer.write(chunk)).then(() => callback(), callback);
    },
    final(callback: Callback) {
      writer.close().then(() => callback(), callback);
    },
    destroy(err: unknown, callback: Callback) {
      (err ? writer.abort(err) : Promise.resolve()).then(
        () => callback(err),
        () => callback(err),
      );
    },
  };
}

/** A web ReadableStream over a Node Readable: paused while the web side's queue is full. */
function webReadable(readable: NodeReadable, options: AdapterOptions = {}): unknown {
  const g = globalThis as unknown as { ReadableStream: new (source: object, strategy?: unknown) => unknown };
  let done = false;
  return new g.ReadableStream(
    {
      start(controller: { enqueue(c: unknown): void; close(): void; error(e: unknown): void; desiredSize: number | null }) {
        readable.pause();
        readable.on('data', (chunk: unknown) => {
          controller.enqueue(chunk);
          if ((controller.desiredSize ?? 0) <= 0) readable.pause();
        });
        readable.on('end', () => {
          if (done) return;
          done = true;
          controller.close();
        });
        readable.on('error', (err: unknown) => {
          if (done) return;
          done = true;
          controller.error(err);
        });
      },
      pull() {
        readable.resume();
      },
      cancel(reason: unknown) {
        done = true;
        readable.destroy(reason);
      },
    },
    options.strategy ?? { highWaterMark: 1 },
  );
}

/** A web WritableStream over a Node Writable: each write waits for the Node side to take it. */
function webWritable(writable: NodeWritable): unknown {
  const g = globalThis as unknown as { WritableStream: new (sink: object) => unknown };
  return new g.WritableStream({
    write(chunk: unknown) {
      return new Promise<void>((resolve, reject) => {
        writable.write(chunk, (err) => (err ? reject(err) : resolve()));
      });
    },
    close() {
      return new Promise<void>((resolve) => writable.end(resolve));
    },
    abort(reason: unknown) {
      writable.destroy(reason);
    },
  });
}

/** Sets the adapters on readable-stream's classes (which `require('stream')` hands out). */
export function installWebAdapters(stream: { Readable: unknown; Writable: unknown; Duplex: unknown }): void {
  const Readable = stream.Readable as Ctor<NodeReadable> & Record<string, unknown>;
  const Writable = stream.Writable as Ctor<NodeWritable> & Record<string, unknown>;
  const Duplex = stream.Duplex as Ctor<NodeReadable & NodeWritable> & Record<string, unknown>;
  Readable.fromWeb = (web: WebReadable, options?: AdapterOptions) => new Readable(readableOptions(web.getReader(), options));
  Readable.toWeb = (readable: NodeReadable, options?: AdapterOptions) => webReadable(readable, options);
  Writable.fromWeb = (web: WebWritable, options?: AdapterOptions) => new Writable(writableOptions(web.getWriter(), options));
  Writable.toWeb = (writable: NodeWritable) => webWritable(writable);
  Duplex.fromWeb = (pair: { readable: WebReadable; writable: WebWritable }, options?: AdapterOptions) => {
    const reader = pair.readable.getReader();
    const writer = pair.writable.getWriter();
    return new Duplex({
      ...writableOptions(writer, options),
      ...readableOptions(reader, options),
      destroy(err: unknown, callback: Callback) {
        void Promise.allSettled([reader.cancel(err ?? undefined), err ? writer.abort(err) : writer.close()]).then(() => callback(err));
      },
    });
  };
  Duplex.toWeb = (duplex: NodeReadable & NodeWritable) => ({ readable: webReadable(duplex), writable: webWritable(duplex) });
}
