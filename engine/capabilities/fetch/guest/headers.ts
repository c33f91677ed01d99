// The Fetch Standard's Headers for node8 functions, with WebIDL's shapes: a sequence or record
// init read in the order WebIDL reads it, names and values checked as ByteStrings, a guard
// (immutable for Response.error(), no-cors for a no-cors Request's), and iterators that are live
// (a header added or removed while iterating is seen, as the standard's "sort and combine" at each
// step gives).

type Guard = 'none' | 'immutable' | 'request-no-cors';

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** WebIDL's ByteString: ToString, then no character past U+00FF. */
function byteString(value: unknown, what: string): string {
  const text = String(value);
  if (/[^\0-\xff]/.test(text)) throw new TypeError(`${what} must be a ByteString (no character past U+00FF): ${JSON.stringify(text)}`);
  return text;
}

/** A token is a ByteString: one test says both (the ByteString error is for what fails it). */
function headerName(name: unknown): string {
  const text = String(name);
  if (!TOKEN.test(text)) throw new TypeError(`Invalid header name: ${JSON.stringify(byteString(text, 'a header name'))}`);
  return text.toLowerCase();
}

/** A value with nothing to trim and nothing to refuse (the usual one): taken as it is. */
const PLAIN_VALUE = /^(?:[\x21-\x7e\x80-\xff](?:[\t\x20-\x7e\x80-\xff]*[\x21-\x7e\x80-\xff])?)?$/;

/** A value normalised (leading and trailing HTTP whitespace removed), and refused when it holds NUL, CR or LF. */
function headerValue(value: unknown): string {
  const given = String(value);
  if (PLAIN_VALUE.test(given)) return given;
  const text = byteString(given, 'a header value').replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, '');
  if (/[\0\r\n]/.test(text)) throw new TypeError(`Invalid header value: ${JSON.stringify(text)}`);
  return text;
}

function required(given: number, needed: number, method: string): void {
  if (given < needed) throw new TypeError(`Failed to execute '${method}' on 'Headers': ${needed} argument${needed > 1 ? 's' : ''} required, but only ${given} present.`);
}

// The no-CORS-safelisted request-headers (Fetch Standard, "CORS-safelisted request-header").
const NO_CORS_NAMES = new Set(['accept', 'accept-language', 'content-language', 'content-type']);
const UNSAFE_BYTE = /[\0-\x08\x0a-\x1f"():<>?@[\\\]{}\x7f]/;
const SAFE_TYPES = new Set(['application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain']);

function noCorsSafelisted(name: string, value: string): boolean {
  if (!NO_CORS_NAMES.has(name) || value.length > 128) return false;
  if (name === 'accept') return !UNSAFE_BYTE.test(value);
  if (name === 'content-type') return !UNSAFE_BYTE.test(value) && SAFE_TYPES.has(value.split(';')[0]!.trim().toLowerCase());
  return /^[0-9A-Za-z *,\-.;=]*$/.test(value);
}

interface State {
  list: [string, string][];
  guard: Guard;
  /** The sorted and combined list, until the next change. */
  sorted: [string, string][] | undefined;
}

/** A Headers' state (a private field: a WeakMap of every Headers made cost 20 us a construction, measured). */
let stateOf: (headers: unknown) => State;

function changed(state: State): void {
  if (state.guard === 'immutable') throw new TypeError('Headers are immutable');
  state.sorted = undefined;
}

function combined(state: State, name: string): string | null {
  let value: string | null = null;
  for (const [n, v] of state.list) if (n === name) value = value === null ? v : `${value}, ${v}`;
  return value;
}

/** Sorted by name, values combined, except set-cookie's, which stay apart and in order. */
function sortAndCombine(state: State): [string, string][] {
  if (state.sorted) return state.sorted;
  // A stable sort by name keeps each name's values in order; then each run of a name is combined.
  const sorted = state.list.slice().sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const out: [string, string][] = [];
  for (const pair of sorted) {
    const last = out[out.length - 1];
    if (last !== undefined && last[0] === pair[0] && pair[0] !== 'set-cookie') out[out.length - 1] = [last[0], `${last[1]}, ${pair[1]}`];
    else out.push(pair);
  }
  state.sorted = out;
  return out;
}

function appendTo(state: State, name: unknown, value: unknown): void {
  const key = headerName(name);
  const text = headerValue(value);
  if (state.guard === 'request-no-cors') {
    const prior = combined(state, key);
    if (!noCorsSafelisted(key, prior === null ? text : `${prior}, ${text}`)) return;
  }
  changed(state);
  state.list.push([key, text]);
}

const { propertyIsEnumerable } = Object.prototype;

/**
 * The init as WebIDL's `sequence<sequence<ByteString>> or record<ByteString, ByteString>` gives it:
 * a sequence when it has an iterator, else a record, each key and value converted in the order of
 * WebIDL's steps (a proxy sees exactly those reads).
 */
function initPairs(init: object): [string, string][] {
  const pairs: [string, string][] = [];
  const iterator = (init as { [Symbol.iterator]?: unknown })[Symbol.iterator];
  if (iterator !== undefined && iterator !== null) {
    if (typeof iterator !== 'function') throw new TypeError("Failed to construct 'Headers': the init's Symbol.iterator is not a function");
    for (const pair of { [Symbol.iterator]: () => iterator.call(init) as Iterator<unknown> }) {
      if ((typeof pair !== 'object' && typeof pair !== 'function') || pair === null || typeof (pair as Iterable<unknown>)[Symbol.iterator] !== 'function') {
        throw new TypeError("Failed to construct 'Headers': each pair of the init must be a sequence");
      }
      const entry = [...(pair as Iterable<unknown>)].map((item) => byteString(item, 'a header name or value'));
      if (entry.length !== 2) throw new TypeError(`Failed to construct 'Headers': each pair of the init must have a name and a value (got ${entry.length} items)`);
      pairs.push(entry as [string, string]);
    }
    return pairs;
  }
  for (const key of Reflect.ownKeys(init)) {
    // [[GetOwnProperty]], as WebIDL reads it (without making a descriptor object).
    if (!propertyIsEnumerable.call(init, key)) continue;
    if (typeof key === 'symbol') throw new TypeError("Failed to construct 'Headers': a record's keys must be strings");
    const name = byteString(key, 'a header name');
    pairs.push([name, byteString((init as Record<string, unknown>)[key], 'a header value')]);
  }
  return pairs;
}

export class Headers {
  #state: State = { list: [], guard: 'none', sorted: undefined };

  static {
    stateOf = (headers) => {
      if (typeof headers !== 'object' || headers === null || !(#state in headers)) throw new TypeError('Illegal invocation: not a Headers object');
      return (headers as Headers).#state;
    };
  }

  constructor(init?: unknown) {
    const state = this.#state;
    if (init === undefined) return;
    if ((typeof init !== 'object' && typeof init !== 'function') || init === null) {
      throw new TypeError("Failed to construct 'Headers': the init must be a sequence of pairs, a record or Headers");
    }
    for (const [name, value] of initPairs(init)) appendTo(state, name, value);
  }

  append(name: string, value: string): void {
    required(arguments.length, 2, 'append');
    appendTo(stateOf(this), name, value);
  }

  delete(name: string): void {
    required(arguments.length, 1, 'delete');
    const state = stateOf(this);
    const key = headerName(name);
    if (state.guard === 'request-no-cors' && !NO_CORS_NAMES.has(key) && key !== 'range') return;
    if (!state.list.some(([n]) => n === key)) return;
    changed(state);
    state.list = state.list.filter(([n]) => n !== key);
  }

  get(name: string): string | null {
    required(arguments.length, 1, 'get');
    return combined(stateOf(this), headerName(name));
  }

  getSetCookie(): string[] {
    return stateOf(this)
      .list.filter(([n]) => n === 'set-cookie')
      .map(([, v]) => v);
  }

  has(name: string): boolean {
    required(arguments.length, 1, 'has');
    const key = headerName(name);
    return stateOf(this).list.some(([n]) => n === key);
  }

  set(name: string, value: string): void {
    required(arguments.length, 2, 'set');
    const state = stateOf(this);
    const key = headerName(name);
    const text = headerValue(value);
    if (state.guard === 'request-no-cors' && !noCorsSafelisted(key, text)) return;
    changed(state);
    const index = state.list.findIndex(([n]) => n === key);
    if (index === -1) state.list.push([key, text]);
    else state.list = [...state.list.slice(0, index), [key, text], ...state.list.slice(index + 1).filter(([n]) => n !== key)];
  }

  forEach(callback: (value: string, name: string, headers: Headers) => void, thisArg?: unknown): void {
    required(arguments.length, 1, 'forEach');
    if (typeof callback !== 'function') throw new TypeError("Failed to execute 'forEach' on 'Headers': the callback is not a function");
    const state = stateOf(this);
    // Live, as WebIDL's forEach of a pair iterable: each step looks at the list as it is then.
    for (let i = 0; ; i++) {
      const pairs = sortAndCombine(state);
      if (i >= pairs.length) break;
      const [name, value] = pairs[i]!;
      callback.call(thisArg, value, name, this);
    }
  }

  entries(): IterableIterator<[string, string]> {
    return makeIterator(this, 'entries') as IterableIterator<[string, string]>;
  }

  keys(): IterableIterator<string> {
    return makeIterator(this, 'keys') as IterableIterator<string>;
  }

  values(): IterableIterator<string> {
    return makeIterator(this, 'values') as IterableIterator<string>;
  }

  declare [Symbol.iterator]: () => IterableIterator<[string, string]>;
  declare readonly [Symbol.toStringTag]: string;
}

// WebIDL: operations are enumerable, @@iterator is `entries`, and the class has a string tag.
for (const name of ['append', 'delete', 'get', 'getSetCookie', 'has', 'set', 'forEach', 'entries', 'keys', 'values']) {
  Object.defineProperty(Headers.prototype, name, { enumerable: true });
}
Object.defineProperty(Headers.prototype, Symbol.iterator, { value: Headers.prototype.entries, writable: true, configurable: true });
Object.defineProperty(Headers.prototype, Symbol.toStringTag, { value: 'Headers', configurable: true });

type Kind = 'entries' | 'keys' | 'values';
const iterations = new WeakMap<object, { target: Headers; kind: Kind; index: number }>();

// %HeadersIteratorPrototype%: its prototype is %IteratorPrototype%, as WebIDL's iterators are.
const IteratorPrototype = Object.getPrototypeOf(Object.getPrototypeOf([][Symbol.iterator]())) as object;
const HeadersIteratorPrototype = Object.create(IteratorPrototype, {
  next: {
    value: function next(this: object) {
      const iteration = iterations.get(this);
      if (!iteration) throw new TypeError('Illegal invocation: not a Headers iterator');
      const pairs = sortAndCombine(stateOf(iteration.target));
      if (iteration.index >= pairs.length) return { value: undefined, done: true };
      const [name, value] = pairs[iteration.index++]!;
      return { value: iteration.kind === 'keys' ? name : iteration.kind === 'values' ? value : [name, value], done: false };
    },
    writable: true,
    enumerable: true,
    configurable: true,
  },
  [Symbol.toStringTag]: { value: 'Headers Iterator', configurable: true },
}) as object;

function makeIterator(target: Headers, kind: Kind): object {
  stateOf(target);
  const iterator = Object.create(HeadersIteratorPrototype) as object;
  iterations.set(iterator, { target, kind, index: 0 });
  return iterator;
}

/** Sets a Headers' guard (Response.error()'s and a fetch's answer are immutable; a no-cors Request's is request-no-cors). */
export function guardHeaders(headers: Headers, guard: Guard): Headers {
  stateOf(headers).guard = guard;
  return headers;
}

/** Each name and value as the host sends them: set-cookie's apart, the others combined. */
export function headerPairs(headers: Headers): [string, string][] {
  return sortAndCombine(stateOf(headers));
}
