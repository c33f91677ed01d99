/**
 * UTF-8 for code inside isolates. Encoding and decoding whole strings is @exodus/bytes' (the
 * WHATWG Encoding Standard's UTF-8, in pure JavaScript: see bytes-platform.ts): in an isolate it
 * encoded 5 MB of ASCII in 19-60 ms and decoded it in 41-90 ms, against 85-135 and 73-145 ms for
 * the loops this file had (4 MB of mixed text: 19-44 and 22-47 ms against 25-49 and 39-54 ms; both
 * measured side by side on the 2-core machine under load). The buffer package's codec, before
 * either, took 4.8 s and 2.3 s. `encodeUtf8Into` stays a loop of islet's: the package's encodeInto
 * encodes the whole string and decodes the part that fit back to count it.
 */
import { utf8fromStringLoose, utf8toString, utf8toStringLoose } from '@exodus/bytes/utf8.js';

const REPLACEMENT = 0xfffd;

/** The UTF-8 bytes of `text`, with each lone surrogate encoded as U+FFFD. */
export function encodeUtf8(text: string): Uint8Array {
  return utf8fromStringLoose(text);
}

/** Encodes as much of `text` as fits whole into `dest` (never half a character). */
export function encodeUtf8Into(text: string, dest: Uint8Array): { read: number; written: number } {
  const n = text.length;
  const room = dest.length;
  let i = 0;
  let w = 0;
  while (i < n) {
    let c = text.charCodeAt(i);
    if (c < 0x80) {
      if (w >= room) break;
      dest[w++] = c;
      i++;
      continue;
    }
    let units = 1;
    if (c >= 0xd800 && c <= 0xdfff) {
      const next = i + 1 < n ? text.charCodeAt(i + 1) : 0;
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00);
        units = 2;
      } else {
        c = REPLACEMENT;
      }
    }
    if (c < 0x800) {
      if (w + 2 > room) break;
      dest[w++] = 0xc0 | (c >> 6);
      dest[w++] = 0x80 | (c & 0x3f);
    } else if (c < 0x10000) {
      if (w + 3 > room) break;
      dest[w++] = 0xe0 | (c >> 12);
      dest[w++] = 0x80 | ((c >> 6) & 0x3f);
      dest[w++] = 0x80 | (c & 0x3f);
    } else {
      if (w + 4 > room) break;
      dest[w++] = 0xf0 | (c >> 18);
      dest[w++] = 0x80 | ((c >> 12) & 0x3f);
      dest[w++] = 0x80 | ((c >> 6) & 0x3f);
      dest[w++] = 0x80 | (c & 0x3f);
    }
    i += units;
  }
  return { read: i, written: w };
}

/** Bytes at the end of `bytes` that begin a character not yet complete (0 to 3). */
export function unfinishedUtf8Tail(bytes: Uint8Array): number {
  const n = bytes.length;
  for (let back = 1; back <= Math.min(3, n); back++) {
    const b = bytes[n - back]!;
    if ((b & 0xc0) === 0x80) continue;
    const length = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return length > back ? back : 0;
  }
  return 0;
}

/** Decodes UTF-8; invalid bytes become U+FFFD (one per maximal invalid subpart), or throw a TypeError when `fatal`. A byte order mark is kept. */
export function decodeUtf8(bytes: Uint8Array, fatal = false): string {
  if (!fatal) return utf8toStringLoose(bytes);
  try {
    return utf8toString(bytes);
  } catch {
    throw new TypeError('The encoded data was not valid utf-8');
  }
}

/** The Encoding Standard's "UTF-8 decode" (what Response#text and Blob#text use): a leading byte order mark is dropped. */
export function decodeUtf8Text(bytes: Uint8Array): string {
  const text = decodeUtf8(bytes);
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** UTF-8 for islet's own libraries, without loading the web/encoding library behind the TextEncoder and TextDecoder globals. */
export const utf8Encoder = { encode: (text: string): Uint8Array => encodeUtf8(text) };
export const utf8Decoder = { decode: (bytes: Uint8Array): string => decodeUtf8Text(bytes) };
