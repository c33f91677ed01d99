// The part of the WebAssembly JS API the Python sandbox uses (V8 has it; TypeScript keeps it in lib.dom).
type BufferSource = ArrayBuffer | ArrayBufferView;
declare namespace WebAssembly {
  type Imports = Record<string, Record<string, unknown>>;
  class Module {
    constructor(bytes: BufferSource);
  }
  class Instance {
    constructor(module: Module, imports?: Imports);
    readonly exports: Record<string, unknown>;
  }
  class Memory {
    readonly buffer: ArrayBuffer;
    grow(delta: number): number;
  }
}
