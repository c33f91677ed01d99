import { encode, decode } from '@msgpack/msgpack';

export function handler() {
  const value = { id: 7, tags: ['a', 'b'], nested: { ok: true }, bytes: new Uint8Array([1, 2, 3]) };
  const encoded = encode(value);
  const decoded = decode(encoded);
  return { size: encoded.byteLength, id: decoded.id, tags: decoded.tags, bytes: Array.from(decoded.bytes) };
}
