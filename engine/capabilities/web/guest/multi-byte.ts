// The legacy multi-byte encodings of TextDecoder (@exodus/bytes), apart from web/encoding so that
// their tables load only when a function asks for one of them.
import { createMultibyteDecoder } from '@exodus/bytes/multi-byte.js';
import { multibyteEncoder } from '@exodus/bytes/fallback/multi-byte.js';

export interface MultiByte {
  createMultibyteDecoder(encoding: string, loose?: boolean): (bytes: Uint8Array, stream?: boolean) => string;
  multibyteEncoder(encoding: string, options?: unknown): unknown;
}

export { createMultibyteDecoder, multibyteEncoder };
