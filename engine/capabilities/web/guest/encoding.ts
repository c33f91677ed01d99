// The WHATWG Encoding Standard for node8 functions: TextEncoder, TextDecoder (every encoding of
// the standard, with its labels, fatal mode and byte order marks), TextEncoderStream and
// TextDecoderStream, all @exodus/bytes' (WPT-tested). The legacy multi-byte encodings' tables
// (Shift_JIS, EUC-JP, ISO-2022-JP, EUC-KR, GBK, gb18030, Big5: 150 KB of text) are the library
// web/multi-byte, evaluated when a TextDecoder is first asked for one of them.
import { setMultibyte } from '@exodus/bytes/fallback/encoding.js';
import { INTERNAL, type Internal } from '../../../node8/sandbox/internal';
import type { MultiByte } from './multi-byte';

declare const require: (id: string) => unknown;
const internal = require(INTERNAL) as Internal;

const multiByte = (): MultiByte => internal.library<MultiByte>('web/multi-byte');
setMultibyte(
  (encoding: string, loose: boolean) => multiByte().createMultibyteDecoder(encoding, loose),
  (encoding: string, options?: unknown) => multiByte().multibyteEncoder(encoding, options),
);

export { TextDecoder, TextDecoderStream, TextEncoder, TextEncoderStream } from '@exodus/bytes/fallback/encoding.js';
