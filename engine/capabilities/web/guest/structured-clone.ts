// The HTML Standard's structured clone, for node8's structuredClone and MessagePort: what it keeps
// that @ungap/structured-clone (used before) lost: -0 inside objects, an Error's `cause`, Blob and
// File, views sharing one ArrayBuffer, and the identity of objects met twice (cycles included).

type Clone = (value: unknown) => unknown;

const ERRORS: Record<string, ErrorConstructor> = { Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError };
const { toString } = Object.prototype;
const tagOf = (value: object): string => toString.call(value).slice(8, -1);

/** A deep copy of `value` as a message would carry it; `fail(message)` makes the DataCloneError thrown for what cannot be cloned. */
export function structuredCopy(value: unknown, fail: (message: string) => Error): unknown {
  const memo = new Map<object, unknown>();
  const clone: Clone = (v) => {
    if (typeof v === 'function') throw fail(`${(v as { name?: string }).name || 'function'} could not be cloned`);
    if (typeof v === 'symbol') throw fail(`${String(v)} could not be cloned`);
    if (typeof v !== 'object' || v === null) return v;
    if (memo.has(v)) return memo.get(v);
    const keep = <T>(copy: T): T => {
      memo.set(v, copy);
      return copy;
    };
    const tag = tagOf(v);
    switch (tag) {
      case 'Boolean':
        return keep(Object(Boolean.prototype.valueOf.call(v)));
      case 'Number':
        return keep(Object(Number.prototype.valueOf.call(v)));
      case 'String':
        return keep(Object(String.prototype.valueOf.call(v)));
      case 'BigInt':
        return keep(Object(BigInt.prototype.valueOf.call(v)));
      case 'Date':
        return keep(new Date(Date.prototype.getTime.call(v)));
      case 'RegExp':
        return keep(new RegExp((v as RegExp).source, (v as RegExp).flags));
      case 'ArrayBuffer':
        return keep(copyBuffer(v as ResizableBuffer, fail));
      case 'DataView': {
        const view = v as DataView;
        let offset: number;
        let length: number;
        try {
          offset = view.byteOffset;
          length = view.byteLength;
        } catch {
          // Its buffer was resized under it (or detached): V8's getters throw.
          throw fail("a DataView out of its buffer's bounds could not be cloned");
        }
        return keep(new DataView(clone(view.buffer) as ArrayBuffer, offset, length));
      }
      case 'Map': {
        const copy = keep(new Map());
        for (const [k, item] of v as Map<unknown, unknown>) copy.set(clone(k), clone(item));
        return copy;
      }
      case 'Set': {
        const copy = keep(new Set());
        for (const item of v as Set<unknown>) copy.add(clone(item));
        return copy;
      }
      case 'Blob':
      case 'File':
        return keep(cloneBlob(v as BlobLike, tag));
      case 'Error':
        return keep(cloneError(v as Error, clone, keep));
    }
    if (ArrayBuffer.isView(v)) {
      const view = v as unknown as { buffer: ArrayBuffer; byteOffset: number; length: number; constructor: new (b: ArrayBuffer, o: number, n: number) => unknown };
      const Typed = (globalThis as unknown as Record<string, typeof view.constructor>)[tag];
      if (!Typed) throw fail(`${tag} could not be cloned`);
      return keep(new Typed(clone(view.buffer) as ArrayBuffer, view.byteOffset, view.length));
    }
    if (Array.isArray(v)) {
      const copy = keep(new Array(v.length) as unknown[]);
      for (const key of Object.keys(v)) (copy as unknown as Record<string, unknown>)[key] = clone((v as unknown as Record<string, unknown>)[key]);
      return copy;
    }
    if (tag !== 'Object' && tag !== 'Arguments' && !isPlainClass(v)) throw fail(`${tag} object could not be cloned`);
    const copy = keep({} as Record<string, unknown>);
    for (const key of Object.keys(v)) copy[key] = clone((v as Record<string, unknown>)[key]);
    return copy;
  };
  return clone(value);
}

interface ResizableBuffer extends ArrayBuffer {
  readonly resizable?: boolean;
  readonly maxByteLength?: number;
  readonly detached?: boolean;
}

/** A copy of a buffer, resizable as the original is (with its maximum). */
function copyBuffer(buffer: ResizableBuffer, fail: (message: string) => Error): ArrayBuffer {
  if (buffer.detached === true) throw fail('a detached ArrayBuffer could not be cloned');
  if (!buffer.resizable) return buffer.slice(0);
  const copy = new (ArrayBuffer as unknown as new (length: number, options: object) => ArrayBuffer)(buffer.byteLength, { maxByteLength: buffer.maxByteLength });
  new Uint8Array(copy).set(new Uint8Array(buffer));
  return copy;
}

/** Instances of user classes are cloned as plain objects (their own properties), as the standard does; platform objects are not. */
function isPlainClass(value: object): boolean {
  return !(value instanceof Promise || value instanceof WeakMap || value instanceof WeakSet || (typeof WeakRef === 'function' && value instanceof WeakRef));
}

interface BlobLike {
  size: number;
  type: string;
  name?: string;
  lastModified?: number;
  slice(start: number, end: number, type: string): unknown;
}

function cloneBlob(blob: BlobLike, tag: string): unknown {
  if (tag === 'Blob') return blob.slice(0, blob.size, blob.type);
  const File = (globalThis as unknown as { File: new (parts: unknown[], name: string, init: object) => unknown }).File;
  return new File([blob], String(blob.name), { type: blob.type, lastModified: blob.lastModified });
}

function cloneError(error: Error, clone: Clone, keep: <T>(copy: T) => T): Error {
  const name = typeof error.name === 'string' && ERRORS[error.name] ? error.name : 'Error';
  const copy = keep(Object.create(ERRORS[name]!.prototype) as Error);
  const define = (key: string, value: unknown) => Object.defineProperty(copy, key, { value, writable: true, configurable: true, enumerable: false });
  if (name !== 'Error' || error.name === 'Error') define('name', name);
  if (Object.prototype.hasOwnProperty.call(error, 'message')) define('message', String(error.message));
  if (typeof error.stack === 'string') define('stack', error.stack);
  if (Object.prototype.hasOwnProperty.call(error, 'cause')) define('cause', clone((error as { cause?: unknown }).cause));
  return copy;
}
