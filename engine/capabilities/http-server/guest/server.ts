// node8's http.Server: a function whose module makes one and calls listen() while it loads is
// served by it. listen() opens no socket: it hands the runtime the server's way of taking a call
// (the port and host are ignored), and the runtime sends every call of the function there as a
// 'request' event with Node's IncomingMessage and ServerResponse.
import { INTERNAL, type Internal } from '../../../node8/sandbox/internal';
import type { CallResult, MetaHead } from '../../../sandbox/protocol';
import { nodeError } from './outgoing';
import { CallSocket, makeIncoming, type Incoming } from './request';
import { makeResponse, ServerResponse } from './response';

declare const require: (id: string) => unknown;
const internal = require(INTERNAL) as Internal;
// The runtime's own timers: user code may have replaced the globals by the time this library loads.
const timers = require('timers') as { setTimeout(fn: () => void, ms: number): unknown; clearTimeout(id: unknown): void };

/** How long a module that made a server and exports no handler may take to listen once it has run. */
const LISTEN_WAIT_MS = 5000;
/** Told when a server listens while the runtime waits for one. */
let listened: (() => void) | undefined;

/** Waits for a server of the module's to listen, for at most LISTEN_WAIT_MS; the load fails after that, saying why. */
function untilListen(main: string, entrypoint: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = timers.setTimeout(() => {
      listened = undefined;
      reject(
        new Error(
          `${main} made an HTTP server that did not listen within ${LISTEN_WAIT_MS / 1000} s of loading (call listen() while the module loads), and it does not export a function named "${entrypoint}"`,
        ),
      );
    }, LISTEN_WAIT_MS);
    listened = () => {
      timers.clearTimeout(timer);
      listened = undefined;
      resolve();
    };
  });
}
type Listener = (...args: unknown[]) => void;
const EventEmitter = require('events') as new () => {
  emit(event: string, ...args: unknown[]): boolean;
  on(event: string, fn: Listener): unknown;
  once(event: string, fn: Listener): unknown;
  rawListeners(event: string): Listener[];
};

/** Where listen() asked to be reached: a port, a path, or an options object with either. */
function addressOf(args: unknown[]): { port: number } | { path: string } {
  const first = args[0];
  if (typeof first === 'object' && first !== null) {
    const options = first as { port?: unknown; path?: unknown };
    if (typeof options.path === 'string') return { path: options.path };
    return { port: Number(options.port) || 0 };
  }
  if (typeof first === 'string' && !/^\d+$/.test(first)) return { path: first };
  return { port: Number(first) || 0 };
}

export class Server extends EventEmitter {
  listening = false;
  timeout = 0;
  keepAliveTimeout = 5000;
  headersTimeout = 60000;
  requestTimeout = 300000;
  maxHeadersCount: number | null = null;
  maxRequestsPerSocket = 0;
  private where: { port: number } | { path: string } = { port: 0 };

  constructor(options?: unknown, requestListener?: Listener) {
    super();
    const listener = typeof options === 'function' ? (options as Listener) : requestListener;
    if (listener) this.on('request', listener);
    internal.serverCreated(untilListen);
  }

  /**
   * Makes this server the function's: its calls come here from now on. Throws when another server
   * of the function listens already, or once the function has loaded (see the runtime's `listen`).
   */
  listen(...args: unknown[]): this {
    const callback = typeof args[args.length - 1] === 'function' ? (args.pop() as Listener) : undefined;
    if (this.listening) throw nodeError(new Error('Listen method has been called more than once without closing.'), 'ERR_SERVER_ALREADY_LISTEN');
    const refused = internal.listen((head, headers, raw) => serve(this, head, headers, raw));
    if (refused === 'loaded') {
      throw nodeError(new Error('server.listen() was called after the function loaded: a function is served by the HTTP server that listens while its module loads'), 'ERR_SERVER_LISTEN_AFTER_LOAD');
    }
    if (refused === 'taken') throw nodeError(new Error('a second server.listen(): a function is served by one HTTP server, and one already listens'), 'ERR_SERVER_ALREADY_LISTEN');
    listened?.();
    this.listening = true;
    this.where = addressOf(args);
    if (callback) this.once('listening', callback);
    queueMicrotask(() => this.emit('listening'));
    return this;
  }

  /** Where it listens, as Node reports it: the port asked for (nothing is bound), on the loopback address. */
  address(): { address: string; family: string; port: number } | string | null {
    if (!this.listening) return null;
    const where = this.where;
    return 'path' in where ? where.path : { address: '127.0.0.1', family: 'IPv4', port: where.port };
  }

  /** Stops serving: the function's calls answer an error from then on. */
  close(callback?: (err?: Error) => void): this {
    if (!this.listening) {
      if (callback) queueMicrotask(() => callback(nodeError(new Error('Server is not running.'), 'ERR_SERVER_NOT_RUNNING')));
      return this;
    }
    this.listening = false;
    if (callback) this.once('close', callback as Listener);
    queueMicrotask(() => this.emit('close'));
    return this;
  }

  setTimeout(ms: number, callback?: Listener): this {
    this.timeout = ms;
    if (callback) this.on('timeout', callback);
    return this;
  }
  closeAllConnections(): void {}
  closeIdleConnections(): void {}
  getConnections(callback: (err: Error | null, count: number) => void): this {
    queueMicrotask(() => callback(null, 0));
    return this;
  }
  ref(): this {
    return this;
  }
  unref(): this {
    return this;
  }
}

/**
 * One call, as Node's server gives it to its 'request' listeners; resolves to the call's answer. A
 * listener that throws, or returns a promise that rejects (an async handler), fails the call with
 * its error, or cuts its stream if it was streaming: in Node it would crash the process, and in an
 * isolate a rejection nobody handles fails every call of the entry it happened in.
 */
function serve(server: Server, head: MetaHead, headersJson: string, raw: string | ArrayBuffer | number | undefined): Promise<CallResult> {
  return new Promise<CallResult>((resolve, reject) => {
    if (!server.listening) {
      reject(new Error("the function's HTTP server was closed (server.close() was called): it answers no more calls"));
      return;
    }
    const listeners = server.rawListeners('request');
    if (listeners.length === 0) {
      reject(new Error("the function's HTTP server has no 'request' listener"));
      return;
    }
    const { IncomingMessage } = require('http') as { IncomingMessage: new () => Incoming };
    const req = makeIncoming(IncomingMessage, head, JSON.parse(headersJson) as Record<string, string>, raw, new CallSocket());
    let answered = false;
    const res = makeResponse(req, (result) => {
      answered = true;
      resolve(result);
    });
    const fail = (err: unknown) => {
      if (answered) internal.reportError(err);
      else {
        answered = true;
        reject(err);
      }
      res.destroy(err instanceof Error ? err : undefined);
    };
    for (const listener of listeners) {
      try {
        const returned = Reflect.apply(listener, server, [req, res]) as { then?: unknown } | undefined;
        if (typeof returned === 'object' && returned !== null && typeof returned.then === 'function') (returned as Promise<unknown>).then(undefined, fail);
      } catch (err) {
        fail(err);
        return;
      }
    }
  });
}

export function createServer(options?: unknown, requestListener?: Listener): Server {
  return new Server(options, requestListener);
}

export { ServerResponse };
