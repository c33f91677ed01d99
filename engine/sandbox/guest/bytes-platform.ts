/**
 * What @exodus/bytes learns of the platform inside an isolate (scripts/build.js puts this file in
 * place of the package's own): nothing is native. Its own detection would take islet's
 * TextEncoder/TextDecoder (made from this package) or Buffer (the npm package) for native ones and
 * call back into them. Its pure JavaScript paths are what islet measured (see utf8.ts).
 */
export const nativeBuffer = null;
export const isHermes = false;
export const isDeno = false;
export const isLE = new Uint8Array(Uint16Array.of(258).buffer)[0] === 2;
export const nativeEncoder = null;
export const nativeDecoder = null;
export const nativeDecoderLatin1 = null;

/** The characters of `a[start..end)` through the table `m` (the package's own loop). */
export function decodePartAddition(a: ArrayLike<number>, start: number, end: number, m: ArrayLike<string>): string {
  let o = '';
  let i = start;
  for (const last3 = end - 3; i < last3; i += 4) {
    o += m[a[i]!];
    o += m[a[i + 1]!];
    o += m[a[i + 2]!];
    o += m[a[i + 3]!];
  }
  while (i < end) o += m[a[i++]!];
  return o;
}

export const decodePartTemplates = decodePartAddition;

export function decode2string(arr: ArrayLike<number>, start: number, end: number, m: ArrayLike<string>): string {
  if (end - start <= 30_000) return decodePartAddition(arr, start, end, m);
  // Long inputs in parts, as the package does (fewer intermediate strings to collect).
  const parts: string[] = [];
  for (let i = start; i < end; ) {
    const next = Math.min(i + 500, end);
    parts.push(decodePartAddition(arr, i, next, m));
    i = next;
  }
  return parts.join('');
}

export function encodeCharcodesPure(str: string, arr: Uint8Array | Uint16Array): Uint8Array | Uint16Array {
  for (let i = 0; i < str.length; i++) arr[i] = str.charCodeAt(i);
  return arr;
}

export const encodeCharcodes = encodeCharcodesPure;
