import type { HostBridge, OpKind } from '../../sandbox/protocol';
import { library } from '../../sandbox/guest/libraries';
import { makeCrypto } from '../../sandbox/guest/random';
import { atob, btoa, getBuffer, TextDecoder, TextEncoder, toArrayBuffer, toBytes } from '../../sandbox/guest/text';

/**
 * Web platform globals for functions: Buffer, TextEncoder/TextDecoder, atob/btoa, URL,
 * URLSearchParams, crypto, fetch/Headers/Response. Each is built on first use, so a cold start
 * only pays for what the function touches. Libraries do the work (buffer, whatwg-url,
 * whatwg-fetch's Headers); randomness and network come from the host as copied bytes.
 */

type Ops = { start(kind: OpKind, payload: string, body: ArrayBuffer | undefined): Promise<{ payload: string; body: ArrayBuffer | undefined }> };

function lazyGlobal(name: string, factory: () => unknown): void {
  Object.defineProperty(globalThis, name, {
    configurable: true,
    enumerable: false,
    get() {
      const value = factory();
      Object.defineProperty(globalThis, name, { value, writable: true, configurable: true, enumerable: false });
      return value;
    },
    set(value: unknown) {
      Object.defineProperty(globalThis, name, { value, writable: true, configurable: true, enumerable: false });
    },
  });
}

/** Response of `fetch`, over bytes (the body methods decode UTF-8 properly). */
class Response {
  readonly status: number;
  readonly statusText: string;
  readonly headers: HeadersLike;
  readonly url: string;
  readonly redirected: boolean;
  readonly type = 'basic';
  private bytes: Uint8Array;
  private used = false;

  constructor(body?: unknown, init: { status?: number; statusText?: string; headers?: unknown; url?: string; redirected?: boolean } = {}) {
    const Headers = (globalThis as unknown as { Headers: new (init?: unknown) => HeadersLike }).Headers;
    this.status = init.status ?? 200;
    this.statusText = init.statusText ?? '';
    this.headers = new Headers(init.headers);
    this.url = init.url ?? '';
    this.redirected = init.redirected ?? false;
    this.bytes = body === undefined || body === null ? new Uint8Array(0) : toBytes(body) ?? new TextEncoder().encode(String(body));
  }
  get ok(): boolean { return this.status >= 200 && this.status < 300; }
  get bodyUsed(): boolean { return this.used; }
  private consume(): Uint8Array {
    if (this.used) throw new TypeError('Body has already been consumed');
    this.used = true;
    return this.bytes;
  }
  async arrayBuffer(): Promise<ArrayBuffer> { return toArrayBuffer(this.consume()); }
  async bytesArray(): Promise<Uint8Array> { return this.consume().slice(); }
  async text(): Promise<string> { return new TextDecoder().decode(this.consume()); }
  async json(): Promise<unknown> { return JSON.parse(await this.text()); }
  clone(): Response {
    if (this.used) throw new TypeError('Response body is already used');
    return new Response(this.bytes.slice(), { status: this.status, statusText: this.statusText, headers: this.headers, url: this.url, redirected: this.redirected });
  }
  static json(data: unknown, init: { status?: number; headers?: unknown } = {}): Response {
    const res = new Response(JSON.stringify(data), init);
    if (!res.headers.has('content-type')) res.headers.set('content-type', 'application/json');
    return res;
  }
}

function makeFetch(ops: Ops) {
  return async function fetch(input: unknown, init: Record<string, unknown> = {}): Promise<Response> {
    const Headers = (globalThis as unknown as { Headers: new (init?: unknown) => HeadersLike }).Headers;
    const source = (typeof input === 'object' && input !== null ? input : {}) as Record<string, unknown>;
    const url = typeof input === 'string' ? input : typeof source.href === 'string' ? source.href : typeof source.url === 'string' ? source.url : String(input);
    const method = String(init.method ?? source.method ?? 'GET').toUpperCase();
    const headerList: [string, string][] = [];
    new Headers(init.headers ?? source.headers).forEach((value, name) => headerList.push([name, value]));
    let body: ArrayBuffer | undefined;
    const rawBody = init.body ?? undefined;
    if (rawBody !== undefined && rawBody !== null) {
      const bytes = toBytes(rawBody) ?? new TextEncoder().encode(String(rawBody));
      body = toArrayBuffer(bytes);
      const isParams = typeof rawBody === 'object' && String(rawBody.constructor?.name) === 'URLSearchParams';
      if (!headerList.some(([n]) => n === 'content-type')) {
        if (typeof rawBody === 'string') headerList.push(['content-type', 'text/plain;charset=UTF-8']);
        else if (isParams) headerList.push(['content-type', 'application/x-www-form-urlencoded;charset=UTF-8']);
      }
    }
    const redirect = String(init.redirect ?? 'follow');
    const result = await ops.start('fetch', JSON.stringify({ url, method, headers: headerList, redirect }), body);
    const meta = JSON.parse(result.payload) as { status: number; statusText: string; headers: [string, string][]; url: string; redirected: boolean };
    return new Response(result.body ?? new ArrayBuffer(0), meta);
  };
}

export function installWebGlobals(host: HostBridge, ops: Ops): void {
  lazyGlobal('Buffer', getBuffer);
  lazyGlobal('TextEncoder', () => TextEncoder);
  lazyGlobal('TextDecoder', () => TextDecoder);
  lazyGlobal('atob', () => atob);
  lazyGlobal('btoa', () => btoa);
  lazyGlobal('URL', () => library('url').URL);
  lazyGlobal('URLSearchParams', () => library('url').URLSearchParams);
  lazyGlobal('crypto', () => makeCrypto(host));
  lazyGlobal('Headers', () => library('fetch').Headers);
  lazyGlobal('Response', () => Response);
  const fetch = makeFetch(ops);
  Object.defineProperty(globalThis, 'fetch', { value: fetch, writable: true, configurable: true, enumerable: false });
}
