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
