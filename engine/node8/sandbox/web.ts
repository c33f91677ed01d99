import type { HostBridge } from './host';
import { library } from './libraries';

/**
 * Web platform globals for functions: Buffer, TextEncoder/TextDecoder, atob/btoa, URL,
 * URLSearchParams, crypto, fetch/Headers/Response. Each is built on first use, so a cold start
 * only pays for what the function touches. Libraries do the work (buffer, whatwg-url,
 * whatwg-fetch's Headers); randomness and network come from the host as copied bytes.
 */

type Ops = { start(kind: string, payload: string, body: ArrayBuffer | undefined): Promise<{ payload: string; body: ArrayBuffer | undefined }> };

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

export function getBuffer(): BufferConstructorLike {
  return library('buffer').Buffer;
}

export function toBytes(value: unknown): Uint8Array | undefined {
  if (value instanceof Uint8Array) return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  return undefined;
}

/** A copy of the bytes as a standalone ArrayBuffer (what crosses back to the host). */
export function toArrayBuffer(bytes: Uint8Array): ArrayBuffer {
  return bytes.slice().buffer as ArrayBuffer;
}

export class TextEncoder {
  readonly encoding = 'utf-8';
  encode(input = ''): Uint8Array {
    const buf = getBuffer().from(String(input), 'utf8');
    return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  }
  encodeInto(input: string, dest: Uint8Array): { read: number; written: number } {
    const bytes = this.encode(input);
    if (bytes.length <= dest.length) {
      dest.set(bytes);
      return { read: String(input).length, written: bytes.length };
    }
    // Fall back to encoding code point by code point until the destination is full.
    let read = 0;
    let written = 0;
    for (const ch of String(input)) {
      const chunk = this.encode(ch);
      if (written + chunk.length > dest.length) break;
      dest.set(chunk, written);
      written += chunk.length;
      read += ch.length;
    }
    return { read, written };
  }
}

const UTF8_LABELS = new Set(['utf-8', 'utf8', 'unicode-1-1-utf-8']);
const UTF16LE_LABELS = new Set(['utf-16le', 'utf-16']);
const LATIN1_LABELS = new Set(['latin1', 'iso-8859-1', 'l1']);

/** TextDecoder for UTF-8 (over the buffer package's codec), UTF-16LE and Latin-1 (byte = code point). */
export class TextDecoder {
  readonly encoding: string;
  readonly fatal: boolean;
  readonly ignoreBOM: boolean;
  constructor(label = 'utf-8', options: { fatal?: boolean; ignoreBOM?: boolean } = {}) {
    const normalized = String(label).trim().toLowerCase();
    if (UTF8_LABELS.has(normalized)) this.encoding = 'utf-8';
    else if (UTF16LE_LABELS.has(normalized)) this.encoding = 'utf-16le';
    else if (LATIN1_LABELS.has(normalized)) this.encoding = 'latin1';
    else throw new RangeError(`The "${label}" encoding is not supported (only utf-8, utf-16le and latin1 are)`);
    this.fatal = Boolean(options.fatal);
    this.ignoreBOM = Boolean(options.ignoreBOM);
  }
  decode(input?: unknown): string {
    if (input === undefined) return '';
    const bytes = toBytes(input);
    if (!bytes) throw new TypeError('The "input" argument must be an ArrayBuffer or ArrayBufferView');
    const text =
      this.encoding === 'utf-16le'
        ? decodeUtf16le(bytes)
        : getBuffer().from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString(this.encoding === 'latin1' ? 'latin1' : 'utf8');
    if (this.fatal && this.encoding === 'utf-8' && text.includes('\uFFFD') && !getBuffer().from(text, 'utf8').every((b, i) => b === bytes[i])) {
      throw new TypeError('The encoded data was not valid utf-8');
    }
    return !this.ignoreBOM && text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  }
}

function decodeUtf16le(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i + 1 < bytes.length; i += 2) out += String.fromCharCode(bytes[i]! | (bytes[i + 1]! << 8));
  return out;
}

function invalidCharacter(message: string): Error {
  const err = new Error(message);
  err.name = 'InvalidCharacterError';
  return err;
}

function btoa(input: unknown): string {
  const text = String(input);
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) > 0xff) throw invalidCharacter('Invalid character: btoa accepts only Latin-1 characters');
  }
  return getBuffer().from(text, 'latin1').toString('base64');
}

function atob(input: unknown): string {
  const text = String(input).replace(/[\t\n\f\r ]/g, '');
  if (text.length % 4 === 1 || /[^A-Za-z0-9+/=]/.test(text) || /=[^=]/.test(text) || /={3,}$/.test(text)) {
    throw invalidCharacter('The string to be decoded is not correctly encoded.');
  }
  return getBuffer().from(text, 'base64').toString('latin1');
}

export function makeCrypto(host: HostBridge): unknown {
  let pool = new Uint8Array(0);
  let offset = 0;
  const take = (n: number): Uint8Array => {
    if (offset + n > pool.length) {
      const hex = host.random(Math.max(n, 1024));
      pool = new Uint8Array(hex.length / 2);
      for (let i = 0; i < pool.length; i++) pool[i] = parseInt(hex.substr(i * 2, 2), 16);
      offset = 0;
    }
    const out = pool.subarray(offset, offset + n);
    offset += n;
    return out;
  };
  return {
    getRandomValues<T extends ArrayBufferView>(array: T): T {
      if (!(array instanceof Int8Array || array instanceof Uint8Array || array instanceof Uint8ClampedArray || array instanceof Int16Array ||
        array instanceof Uint16Array || array instanceof Int32Array || array instanceof Uint32Array || array instanceof BigInt64Array || array instanceof BigUint64Array)) {
        throw new TypeError('The data argument must be an integer-type TypedArray');
      }
      if (array.byteLength > 65536) {
        const err = new Error(`The ArrayBufferView's byte length (${array.byteLength}) exceeds the number of bytes of entropy available via this API (65536)`);
        err.name = 'QuotaExceededError';
        throw err;
      }
      new Uint8Array(array.buffer, array.byteOffset, array.byteLength).set(take(array.byteLength));
      return array;
    },
    randomUUID(): string {
      const b = Uint8Array.from(take(16));
      b[6] = (b[6]! & 0x0f) | 0x40;
      b[8] = (b[8]! & 0x3f) | 0x80;
      const hex = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
      return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    },
  };
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
