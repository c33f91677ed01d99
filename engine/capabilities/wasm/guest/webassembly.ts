// WebAssembly for node8 functions, its memory held to the function's memory limit (see wasm.ts).
import { INTERNAL, type Internal } from '../../../node8/sandbox/internal';
import { guardedWebAssembly } from './wasm';

declare const require: (id: string) => unknown;
const internal = require(INTERNAL) as Internal;

export const WebAssembly = guardedWebAssembly(internal.takeWebAssembly() as Parameters<typeof guardedWebAssembly>[0], () => internal.memoryLimitMb, internal.wasmMemories);
