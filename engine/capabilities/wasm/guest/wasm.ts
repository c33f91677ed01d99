/**
 * WebAssembly for node8 functions, with its memory charged to the function's memory limit by what
 * it uses. isolated-vm does not count WebAssembly memory against an isolate's limit, and wasm code
 * grows its memories (`memory.grow`) without any JavaScript to intercept. So:
 * - every memory is made here: a module's own memories are rewritten in its binary into imports
 *   (of the module `islet:memory`, which `Module.imports` does not list) that each instantiation
 *   fills with a new `WebAssembly.Memory`, so every memory alive can be measured;
 * - a memory is charged its current size: one that would start past what the live memories leave
 *   of the limit is refused (`RangeError`), and so is a `grow()` from JavaScript past it;
 * - each memory's maximum is held within the limit, so wasm code growing one past the limit gets
 *   -1 from `memory.grow` (as V8 answers at a maximum). Memories grown by wasm code past the limit
 *   together are found when the call ends: the call answers ERR_RESOURCE_LIMIT and the instance is
 *   discarded (engine/node8/sandbox/index.ts). What they may grow to in the meantime is bounded:
 *   the maximums of the live memories together stay within twice the limit: a new memory's
 *   maximum is at most half of what the live ones leave (at least its start), and one that would
 *   start past what they leave is refused.
 * A shared memory made from JavaScript is charged as any other; one a module declares (wasm
 * threads, which a function cannot start) and 64-bit memories are refused. isolated-vm never
 * settles the promises of WebAssembly.compile/instantiate (its issue #308): those run
 * synchronously here.
 */
import type { WasmMemories } from '../../../node8/sandbox/wasm-memories';

const PAGE = 65536;
/** What the maximums of the live memories may add up to, in function memory limits. */
const MAXIMUMS_IN_LIMITS = 2;
/** The import module a module's own memories become. */
export const MEMORY_IMPORT = 'islet:memory';

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

function toBytes(source: unknown): Uint8Array {
  if (source instanceof ArrayBuffer) return new Uint8Array(source);
  if (ArrayBuffer.isView(source)) return new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
  throw new TypeError('WebAssembly.Module(): Argument 0 must be a buffer source');
}

interface MemoryDeclaration {
  initial: number;
  maximum?: number;
}

/**
 * Bytes written one at a time into a typed array (whose indexed writes no prototype can intercept:
 * this runs after user code, which may have replaced Array.prototype's methods or put setters on it).
 */
class ByteWriter {
  private bytes: Uint8Array;
  length = 0;
  constructor(capacity: number) {
    this.bytes = new Uint8Array(capacity);
  }
  byte(value: number): void {
    if (this.length === this.bytes.length) {
      const larger = new Uint8Array(this.bytes.length * 2 + 16);
      for (let i = 0; i < this.length; i++) larger[i] = this.bytes[i]!;
      this.bytes = larger;
    }
    this.bytes[this.length++] = value;
  }
  leb(value: number): void {
    let v = value;
    do {
      let b = v % 128;
      v = Math.floor(v / 128);
      if (v > 0) b |= 0x80;
      this.byte(b);
    } while (v > 0);
  }
  name(text: string): void {
    this.leb(text.length);
    for (let i = 0; i < text.length; i++) this.byte(text.charCodeAt(i));
  }
  copy(from: Uint8Array, start: number, end: number): void {
    for (let i = start; i < end; i++) this.byte(from[i]!);
  }
  section(id: number, content: ByteWriter): void {
    this.byte(id);
    this.leb(content.length);
    this.copy(content.bytes, 0, content.length);
  }
  done(): Uint8Array {
    return this.bytes.subarray(0, this.length);
  }
}

/**
 * The module's binary with each memory it defines turned into an import of MEMORY_IMPORT (named by
 * its position), and those memories' limits. Indexes do not move: imported memories come before
 * defined ones, and the new imports follow any memory the module imported itself.
 */
export function importMemories(source: unknown, capPages: number, CompileError: ErrorConstructor): { bytes: Uint8Array; memories: MemoryDeclaration[] } {
  const bytes = toBytes(source);
  const none = { bytes, memories: [] };
  if (bytes.length < 8 || bytes[0] !== 0 || bytes[1] !== 0x61 || bytes[2] !== 0x73 || bytes[3] !== 0x6d) return none;
  const memories: MemoryDeclaration[] = [];
  let memoryCount = 0;
  let memorySection = -1;
  let importSection = -1;
  try {
    for (let at = 8; at < bytes.length; ) {
      const [size, contentStart] = leb(bytes, at + 1);
      if (contentStart + size > bytes.length) throw new Error('section past the end');
      if (bytes[at] === 2) importSection = at;
      if (bytes[at] === 5) memorySection = at;
      at = contentStart + size;
    }
    if (memorySection < 0) return none;
    let p = leb(bytes, memorySection + 1)[1];
    const [count, afterCount] = leb(bytes, p);
    p = afterCount;
    for (let i = 0; i < count; i++) {
      const flags = bytes[p++]!;
      if (flags & 0x02) throw new CompileError('WebAssembly.Module(): shared memories are not available in islet functions');
      if (flags & 0x04) throw new CompileError('WebAssembly.Module(): 64-bit memories are not available in islet functions');
      const [initial, afterMin] = leb(bytes, p);
      p = afterMin;
      let maximum: number | undefined;
      if (flags & 0x01) [maximum, p] = leb(bytes, p);
      if (initial > capPages) {
        throw new CompileError(`WebAssembly.Module(): the module's memory starts at ${(initial * PAGE) / 2 ** 20} MB, over the function's memory limit of ${(capPages * PAGE) / 2 ** 20} MB`);
      }
      memories[memoryCount++] = maximum === undefined ? { initial } : { initial, maximum };
    }
  } catch (err) {
    if (err instanceof CompileError) throw err;
    // A binary this reading cannot follow is left to V8, which rejects it.
    return none;
  }
  /** The import section: the module's own imports (if any), then one per memory it defined. */
  const imports = (): ByteWriter => {
    const content = new ByteWriter(64);
    let existing = 0;
    let from = 0;
    let end = 0;
    if (importSection >= 0) {
      const [size, contentStart] = leb(bytes, importSection + 1);
      [existing, from] = leb(bytes, contentStart);
      end = contentStart + size;
    }
    content.leb(existing + memoryCount);
    content.copy(bytes, from, end);
    for (let i = 0; i < memoryCount; i++) {
      const { initial, maximum } = memories[i]!;
      content.name(MEMORY_IMPORT);
      content.name(String(i));
      content.byte(0x02);
      content.byte(maximum === undefined ? 0x00 : 0x01);
      content.leb(initial);
      if (maximum !== undefined) content.leb(maximum);
    }
    return content;
  };
  const out = new ByteWriter(bytes.length + 32 * memoryCount + 16);
  out.copy(bytes, 0, 8);
  let placed = false;
  for (let at = 8; at < bytes.length; ) {
    const id = bytes[at]!;
    const [size, contentStart] = leb(bytes, at + 1);
    const end = contentStart + size;
    // Without an import section of its own, it goes after the type section (1), before any other known one.
    if (!placed && importSection < 0 && id !== 0 && id !== 1) {
      out.section(2, imports());
      placed = true;
    }
    if (at === importSection) out.section(2, imports());
    else if (at !== memorySection) out.copy(bytes, at, end);
    at = end;
  }
  if (!placed && importSection < 0) out.section(2, imports());
  return { bytes: out.done(), memories };
}

/** Gives `guarded` the place of `original`: its prototype, and that prototype's `constructor`. */
function takePlace(guarded: unknown, original: unknown): void {
  const prototype = (original as { prototype: object }).prototype;
  (guarded as { prototype: object }).prototype = prototype;
  Object.defineProperty(prototype, 'constructor', { __proto__: null, value: guarded, writable: true, configurable: true, enumerable: false } as PropertyDescriptor);
}

/** A guarded WebAssembly namespace over the isolate's own; `memories` counts what its memories use. */
export function guardedWebAssembly(native: Native, limitMb: () => number, memories: WasmMemories): Record<string, unknown> {
  const capPages = () => Math.floor((limitMb() * 2 ** 20) / PAGE);
  const mb = (pages: number) => (pages * PAGE) / 2 ** 20;
  const declarationsOf = new WeakMap<object, MemoryDeclaration[]>();

  /** A new memory charged by its size: refused when it would start past what the live memories leave of the limit. */
  const newMemory = (initial: number, declaredMaximum: number | undefined, shared = false) => {
    const used = memories.usage(capPages() - initial);
    if (used + initial > capPages()) {
      throw new RangeError(`WebAssembly memories would use ${mb(used + initial)} MB, over the function's memory limit of ${limitMb()} MB`);
    }
    // Within the limit, and at most half of what the live memories' maximums leave of twice the
    // limit, so that the memories made after it in the same job still fit (a module's small helper
    // memories, a second call's): memories made in a job stay alive to its end whatever is
    // collected, since V8 keeps a new WeakRef's target for the job and the count holds one each.
    // Counted again, without the collected ones, when half leaves too little.
    const wanted = Math.min(declaredMaximum ?? capPages(), capPages());
    if ((MAXIMUMS_IN_LIMITS * capPages() - memories.maxPages()) / 2 < wanted) memories.collect();
    const room = MAXIMUMS_IN_LIMITS * capPages() - memories.maxPages();
    const maximum = Math.min(wanted, Math.max(initial, Math.floor(room / 2)));
    if (initial > room || maximum < initial) {
      throw new RangeError(
        `WebAssembly memories alive could grow to ${mb(memories.maxPages() + initial)} MB together, over ${MAXIMUMS_IN_LIMITS} times the function's memory limit of ${limitMb()} MB`,
      );
    }
    // A descriptor without a prototype: V8 reads `shared` (and the index type) from it, which
    // Object.prototype could otherwise answer.
    const memory = new native.Memory({ __proto__: null, initial, maximum, shared } as { initial: number; maximum: number; shared: boolean });
    memories.track(memory, maximum, shared);
    return memory;
  };

  function Module(this: unknown, source: unknown) {
    if (!new.target) throw new TypeError("WebAssembly.Module must be invoked with 'new'");
    const { bytes, memories: declared } = importMemories(source, capPages(), native.CompileError);
    const module = new native.Module(bytes);
    declarationsOf.set(module, declared);
    return module;
  }
  function Instance(this: unknown, module: object, imports?: object) {
    if (!new.target) throw new TypeError("WebAssembly.Instance must be invoked with 'new'");
    const declared = declarationsOf.get(module);
    if (declared === undefined) throw new TypeError('WebAssembly.Instance(): Argument 0 must be a WebAssembly.Module');
    if (declared.length === 0) return new native.Instance(module, imports);
    if (imports !== undefined && (typeof imports !== 'object' || imports === null)) throw new TypeError('WebAssembly.Instance(): Argument 1 must be an object');
    // The module's own memories, made new for this instance, under the import module V8 asks for
    // first: the caller's imports stay the prototype, where V8 finds every other module.
    const made = { __proto__: null } as unknown as Record<string, object>;
    for (let i = 0; i < declared.length; i++) made[String(i)] = newMemory(declared[i]!.initial, declared[i]!.maximum);
    return new native.Instance(module, { __proto__: imports ?? null, [MEMORY_IMPORT]: made });
  }
  function Memory(this: unknown, descriptor: { initial: number; maximum?: number; shared?: boolean }) {
    if (!new.target) throw new TypeError("WebAssembly.Memory must be invoked with 'new'");
    // A shared memory is a SharedArrayBuffer's only way in where it is not a global (pages without
    // cross-origin isolation). Charged as any; with no threads in a function, it is never shared.
    const shared = Boolean(descriptor?.shared);
    if (shared && descriptor.maximum === undefined) throw new TypeError('WebAssembly.Memory(): If shared is true, maximum property should be defined.');
    const initial = Number(descriptor?.initial);
    if (!(initial >= 0)) throw new TypeError("WebAssembly.Memory(): Property 'initial' is required");
    if (initial > capPages()) throw new RangeError(`WebAssembly.Memory(): ${initial} pages are over the function's memory limit of ${limitMb()} MB`);
    return newMemory(initial, descriptor?.maximum === undefined ? undefined : Number(descriptor.maximum), shared);
  }
  /** `grow` from JavaScript, refused past what the live memories leave of the limit (wasm code's own is held by the memory's maximum). */
  function grow(this: object, delta: unknown) {
    const pages = Number(delta);
    const used = memories.usage(capPages() - pages);
    if (pages > 0 && used + pages > capPages()) {
      throw new RangeError(`WebAssembly.Memory.grow(): WebAssembly memories would use ${mb(used + pages)} MB, over the function's memory limit of ${limitMb()} MB`);
    }
    return memories.grow(this, delta);
  }
  Object.defineProperty(native.Memory.prototype, 'grow', { __proto__: null, value: grow, writable: true, configurable: true, enumerable: true } as PropertyDescriptor);
  // The guarded constructors take the native ones' places, `constructor` of their prototypes
  // included: that is how a module or memory would otherwise lead back to the unguarded ones.
  // One by one, not over an array: this runs when user code has run, and iterating an array would
  // hand each pair to an iterator user code can replace.
  takePlace(Module, native.Module);
  takePlace(Instance, native.Instance);
  takePlace(Memory, native.Memory);
  const nativeStatics = native.Module as unknown as Record<string, (module: object, name?: string) => unknown>;
  const statics = Module as unknown as Record<string, unknown>;
  statics.exports = nativeStatics.exports;
  statics.customSections = nativeStatics.customSections;
  // Without the memories the module defined, which the rewritten binary imports.
  statics.imports = (module: object) => (nativeStatics.imports!(module) as { module: string }[]).filter((entry) => entry.module !== MEMORY_IMPORT);

  const compile = async (source: unknown) => new (Module as unknown as new (s: unknown) => object)(source);
  const instantiate = async (source: unknown, imports?: object) => {
    if (declarationsOf.has(source as object)) return new (Instance as unknown as new (m: unknown, i?: object) => object)(source, imports);
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
