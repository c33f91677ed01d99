/**
 * The seed style's `context.request`: method, path, query, headers, body, requestId and env, built
 * for few allocations per call (each young-generation page a call touches stays resident in every
 * warm isolate).
 */
import { getBuffer } from '../../sandbox/guest/text';
import type { MetaHead } from '../../sandbox/protocol';

/**
 * `request.query`: the last value of each name, decoded. Written for few allocations per call (each
 * young-generation page a call touches stays resident in every warm isolate): no decoding when the
 * query has no escapes, and no intermediate arrays.
 */
export function parseQuery(raw: string): Record<string, string> {
  const query: Record<string, string> = {};
  if (!raw) return query;
  const escaped = raw.includes('%') || raw.includes('+');
  for (let start = 0; start < raw.length; ) {
    let end = raw.indexOf('&', start);
    if (end === -1) end = raw.length;
    if (end > start) {
      let eq = raw.indexOf('=', start);
      if (eq === -1 || eq > end) eq = end;
      const key = raw.slice(start, eq);
      const value = eq === end ? '' : raw.slice(eq + 1, end);
      setQuery(query, escaped ? decode(key) : key, escaped ? decode(value) : value);
    }
    start = end + 1;
  }
  return query;
}

/** An own property even for `__proto__`, which plain assignment would treat as the prototype. */
function setQuery(query: Record<string, string>, key: string, value: string): void {
  if (key === '__proto__') Object.defineProperty(query, key, { value, writable: true, enumerable: true, configurable: true });
  else query[key] = value;
}

function decode(s: string): string {
  const plain = s.includes('+') ? s.replaceAll('+', ' ') : s;
  if (!plain.includes('%')) return plain;
  try {
    return decodeURIComponent(plain);
  } catch {
    return plain;
  }
}

/**
 * A request field made on first read from what is kept under `source` (a symbol, not enumerable),
 * then kept there for the next read: an own enumerable accessor, so it shows in JSON, spread and
 * Object.keys like a plain field. One descriptor shared by every request: a getter written in each
 * request's object literal cost about 550 bytes of young-generation memory per call, and those
 * pages stay resident in every warm isolate.
 */
function madeOnFirstRead<T>(source: symbol, isMade: (kept: unknown) => kept is T, make: (kept: unknown) => T): PropertyDescriptor {
  return {
    enumerable: true,
    configurable: true,
    get(this: Record<symbol, unknown>) {
      const kept = this[source];
      if (isMade(kept)) return kept;
      const made = make(kept);
      // A frozen request makes it again on each read.
      if (typeof this === 'object' && this !== null) Reflect.defineProperty(this, source, { value: made, writable: true });
      return made;
    },
  };
}

/** `request.headers`: their JSON until the first read, then the object; the field can be assigned. */
const HEADERS_SOURCE = Symbol('headers');
const HEADERS_PROPERTY: PropertyDescriptor = {
  ...madeOnFirstRead(
    HEADERS_SOURCE,
    (kept): kept is Record<string, string> | undefined => typeof kept !== 'string',
    (json) => JSON.parse(json as string) as Record<string, string>,
  ),
  set(this: object, value: unknown) {
    Reflect.defineProperty(this, 'headers', { value, writable: true, enumerable: true, configurable: true });
  },
};

/** `request.body`: the raw body (absent when the call had none) until the first read, then its Buffer. */
const BODY_SOURCE = Symbol('body');
const BODY_PROPERTY = madeOnFirstRead(
  BODY_SOURCE,
  (kept): kept is Uint8Array => kept instanceof Uint8Array,
  (raw) => {
    const Buffer = getBuffer();
    return raw === undefined ? Buffer.from([]) : typeof raw === 'string' ? Buffer.from(raw, 'utf8') : Buffer.from(raw as ArrayBuffer);
  },
);

export function makeRequest(head: MetaHead, headers: string, raw: string | ArrayBuffer | undefined, env: Record<string, string>) {
  const request: Record<string, unknown> = { method: head[1], path: head[2], query: parseQuery(head[3]) };
  Object.defineProperty(request, 'headers', HEADERS_PROPERTY);
  Object.defineProperty(request, HEADERS_SOURCE, { value: headers, writable: true });
  Object.defineProperty(request, 'body', BODY_PROPERTY);
  request.requestId = head[0];
  request.env = env;
  if (raw !== undefined) Object.defineProperty(request, BODY_SOURCE, { value: raw, writable: true });
  return request;
}
