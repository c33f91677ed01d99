/**
 * WebAssembly for node8 functions, with its memory held to the function's memory limit.
 * isolated-vm does not count WebAssembly memory against an isolate's limit, and wasm code grows its
 * memories (`memory.grow`) without any JavaScript to intercept. So every memory's maximum is fixed
 * before it exists: a module's own memories are rewritten in its binary to declare a maximum within
 * the limit (a module asking for more at start fails to compile), `WebAssembly.Memory` takes no
 * larger maximum, and the maximums of all the memories alive together may not pass the limit.
 * Shared and 64-bit memories are refused. isolated-vm never settles the promises of
 * WebAssembly.compile/instantiate (its issue #308): those run synchronously here.
 */
const PAGE = 65536;

interface Native {
  Module: new (bytes: BufferSource) => object;
  Instance: new (module: object, imports?: object) => object;
  Memory: new (descriptor: { initial: number; maximum?: number; shared?: boolean }) => { buffer: ArrayBuffer };
  validate(bytes: BufferSource): boolean;
  CompileError: ErrorConstructor;
  LinkError: ErrorConstructor;
  RuntimeError: ErrorConstructor;
  [key: string]: unknown;
}

function leb(bytes: Uint8Array, at: number): [value: number, next: number] {
  let value = 0;
  let shift = 0;
  for (;;) {
    if (at >= bytes.length) throw new Error('unexpected end');
    const b = bytes[at++]!;
    value += (b & 0x7f) * 2 ** shift;
    if ((b & 0x80) === 0) return [value, at];
    shift += 7;
    if (shift > 35) throw new Error('integer too long');
  }
}

function encodeLeb(value: number): number[] {
  const out: number[] = [];
  let v = value;
  do {
    let b = v % 128;
    v = Math.floor(v / 128);
    if (v > 0) b |= 0x80;
    out.push(b);
  } while (v > 0);
  return out;
}

function toBytes(source: unknown): Uint8Array {
  if (source instanceof ArrayBuffer) return new Uint8Array(source);
  if (ArrayBuffer.isView(source)) return new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
  throw new TypeError('WebAssembly.Module(): Argument 0 must be a buffer source');
}

/** The module's binary with each memory it defines given a maximum within `capPages`, and what they reserve. */
export function capMemories(source: unknown, capPages: number, CompileError: ErrorConstructor): { bytes: Uint8Array; reservedPages: number } {
  const bytes = toBytes(source);
  if (bytes.length < 8 || bytes[0] !== 0 || bytes[1] !== 0x61 || bytes[2] !== 0x73 || bytes[3] !== 0x6d) return { bytes, reservedPages: 0 };
  const pieces: Uint8Array[] = [bytes.subarray(0, 8)];
  let reservedPages = 0;
  let at = 8;
  try {
    while (at < bytes.length) {
      const id = bytes[at]!;
      const [size, contentStart] = leb(bytes, at + 1);
      const end = contentStart + size;
      if (id !== 5) {
        pieces.push(bytes.subarray(at, end));
        at = end;
        continue;
      }
      let p = contentStart;
      const [count, afterCount] = leb(bytes, p);
      p = afterCount;
      const content: number[] = [...encodeLeb(count)];
      for (let i = 0; i < count; i++) {
        const flags = bytes[p++]!;
        if (flags & 0x02) throw new CompileError('WebAssembly.Module(): shared memories are not available in islet functions');
        if (flags & 0x04) throw new CompileError('WebAssembly.Module(): 64-bit memories are not available in islet functions');
        const [min, afterMin] = leb(bytes, p);
        p = afterMin;
        let max = capPages;
        if (flags & 0x01) {
          const [declared, afterMax] = leb(bytes, p);
          p = afterMax;
          max = Math.min(declared, capPages);
        }
        if (min > capPages) {
          throw new CompileError(`WebAssembly.Module(): the module's memory starts at ${(min * PAGE) / 2 ** 20} MB, over the function's memory limit of ${(capPages * PAGE) / 2 ** 20} MB`);
        }
        reservedPages += max;
        content.push(0x01, ...encodeLeb(min), ...encodeLeb(max));
      }
      pieces.push(Uint8Array.of(5, ...encodeLeb(content.length), ...content));
      at = end;
    }
  } catch (err) {
    if (err instanceof CompileError) throw err;
    // A binary this reading cannot follow is left to V8, which rejects it.
    return { bytes, reservedPages: 0 };
  }
  const out = new Uint8Array(pieces.reduce((n, p) => n + p.byteLength, 0));
  let offset = 0;
  for (const piece of pieces) {
    out.set(piece, offset);
    offset += piece.byteLength;
  }
  return { bytes: out, reservedPages };
}

/** Gives `guarded` the place of `original`: its prototype, and that prototype's `constructor`. */
function takePlace(guarded: unknown, original: unknown): void {
  const prototype = (original as { prototype: object }).prototype;
  (guarded as { prototype: object }).prototype = prototype;
  Object.defineProperty(prototype, 'constructor', { __proto__: null, value: guarded, writable: true, configurable: true, enumerable: false } as PropertyDescriptor);
}

/** A guarded WebAssembly namespace over the isolate's own. */
export function guardedWebAssembly(native: Native, limitMb: () => number): Record<string, unknown> {
  const capPages = () => Math.floor((limitMb() * 2 ** 20) / PAGE);
  let reserved = 0;
  const reservedOf = new WeakMap<object, number>();
  const release = new FinalizationRegistry<number>((pages) => (reserved -= pages));
  const reserve = (pages: number, holder: object) => {
    if (reserved + pages > capPages()) {
      throw new RangeError(`WebAssembly memories would reserve ${((reserved + pages) * PAGE) / 2 ** 20} MB, over the function's memory limit of ${limitMb()} MB`);
    }
    reserved += pages;
    if (pages > 0) release.register(holder, pages);
  };

  function Module(this: unknown, source: unknown) {
    if (!new.target) throw new TypeError("WebAssembly.Module must be invoked with 'new'");
    const { bytes, reservedPages } = capMemories(source, capPages(), native.CompileError);
    const module = new native.Module(bytes);
    reservedOf.set(module, reservedPages);
    return module;
  }
  function Instance(this: unknown, module: object, imports?: object) {
    if (!new.target) throw new TypeError("WebAssembly.Instance must be invoked with 'new'");
    if (!reservedOf.has(module)) throw new TypeError('WebAssembly.Instance(): Argument 0 must be a WebAssembly.Module');
    const instance = new native.Instance(module, imports);
    reserve(reservedOf.get(module)!, instance);
    return instance;
  }
  function Memory(this: unknown, descriptor: { initial: number; maximum?: number; shared?: boolean }) {
    if (!new.target) throw new TypeError("WebAssembly.Memory must be invoked with 'new'");
    if (descriptor?.shared) throw new TypeError('WebAssembly.Memory(): shared memories are not available in islet functions');
    const initial = Number(descriptor?.initial);
    const maximum = Math.min(descriptor?.maximum === undefined ? capPages() : Number(descriptor.maximum), capPages());
    if (initial > maximum) throw new RangeError(`WebAssembly.Memory(): ${initial} pages are over the function's memory limit of ${limitMb()} MB`);
    // A descriptor without a prototype: V8 reads `shared` (and the index type) from it, which
    // Object.prototype could otherwise answer.
    const memory = new native.Memory({ __proto__: null, initial, maximum } as { initial: number; maximum: number });
    reserve(maximum, memory);
    return memory;
  }
  // The guarded constructors take the native ones' places, `constructor` of their prototypes
  // included: that is how a module or memory would otherwise lead back to the unguarded ones.
  // One by one, not over an array: this runs when user code has run, and iterating an array would
  // hand each pair to an iterator user code can replace.
  takePlace(Module, native.Module);
  takePlace(Instance, native.Instance);
  takePlace(Memory, native.Memory);
  for (const name of ['exports', 'imports', 'customSections']) (Module as unknown as Record<string, unknown>)[name] = (native.Module as unknown as Record<string, unknown>)[name];

  const compile = async (source: unknown) => new (Module as unknown as new (s: unknown) => object)(source);
  const instantiate = async (source: unknown, imports?: object) => {
    if (reservedOf.has(source as object)) return new (Instance as unknown as new (m: unknown, i?: object) => object)(source, imports);
    const module = await compile(source);
    return { module, instance: new (Instance as unknown as new (m: unknown, i?: object) => object)(module, imports) };
  };
  const fromResponse = async (response: unknown) => {
    const r = await response;
    if (typeof (r as { arrayBuffer?: unknown })?.arrayBuffer !== 'function') throw new TypeError('WebAssembly: argument must be a Response or a promise of one');
    return (r as { arrayBuffer(): Promise<ArrayBuffer> }).arrayBuffer();
  };
  return {
    Module,
    Instance,
    Memory,
    Table: native.Table,
    Global: native.Global,
    Tag: native.Tag,
    Exception: native.Exception,
    CompileError: native.CompileError,
    LinkError: native.LinkError,
    RuntimeError: native.RuntimeError,
    validate: (source: unknown) => native.validate(toBytes(source)),
    compile,
    instantiate,
    compileStreaming: async (response: unknown) => compile(await fromResponse(response)),
    instantiateStreaming: async (response: unknown, imports?: object) => instantiate(await fromResponse(response), imports),
    [Symbol.toStringTag]: 'WebAssembly',
  };
}
