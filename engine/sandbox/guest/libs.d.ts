// Types for the libraries bundled into the isolate (only what the sandbox uses).
declare module 'buffer' {
  export const Buffer: BufferConstructorLike;
}
declare module 'whatwg-url' {
  export const URL: new (input: string, base?: string) => { href: string; toString(): string };
  export const URLSearchParams: new (init?: unknown) => { toString(): string };
}
interface BufferLike extends Uint8Array {
  toString(encoding?: string, start?: number, end?: number): string;
}
interface BufferConstructorLike {
  from(value: unknown, encodingOrOffset?: unknown, length?: number): BufferLike;
  isBuffer(value: unknown): boolean;
  byteLength(value: string, encoding?: string): number;
}
// @exodus/bytes' internal files (not in its exports; scripts/build.js resolves them).
declare module '@exodus/bytes/fallback/encoding.js' {
  export function setMultibyte(createDecoder: (encoding: string, loose: boolean) => unknown, createEncoder: (encoding: string, options?: unknown) => unknown): void;
  export const TextDecoder: unknown;
  export const TextEncoder: unknown;
  export const TextDecoderStream: unknown;
  export const TextEncoderStream: unknown;
}
declare module '@exodus/bytes/fallback/multi-byte.js' {
  export function multibyteEncoder(encoding: string, options?: unknown): unknown;
}
