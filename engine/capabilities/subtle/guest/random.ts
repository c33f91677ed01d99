/** `crypto.getRandomValues` and `crypto.randomUUID` over the host's CSPRNG (bytes drawn in blocks). */
import type { HostBridge } from '../../../sandbox/protocol';

export function makeCrypto(hostRandom: HostBridge['random']): unknown {
  let pool = new Uint8Array(0);
  let offset = 0;
  const take = (n: number): Uint8Array => {
    if (offset + n > pool.length) {
      const hex = hostRandom(Math.max(n, 1024));
      pool = new Uint8Array(hex.length / 2);
      for (let i = 0; i < pool.length; i++) pool[i] = parseInt(hex.substr(i * 2, 2), 16);
      offset = 0;
    }
    const out = pool.subarray(offset, offset + n);
    offset += n;
    return out;
  };
  return {
    getRandomValues<T extends ArrayBufferView>(array: T): T {
      if (
        !(
          array instanceof Int8Array ||
          array instanceof Uint8Array ||
          array instanceof Uint8ClampedArray ||
          array instanceof Int16Array ||
          array instanceof Uint16Array ||
          array instanceof Int32Array ||
          array instanceof Uint32Array ||
          array instanceof BigInt64Array ||
          array instanceof BigUint64Array
        )
      ) {
        // A DOMException of the WebCrypto standard's name (Node 20 has it too); a TypeError for what is no typed array at all.
        const DOMException = (globalThis as { DOMException?: new (message: string, name: string) => Error }).DOMException;
        const message = 'The data argument must be an integer-type TypedArray';
        if (ArrayBuffer.isView(array) && DOMException) throw new DOMException(message, 'TypeMismatchError');
        throw new TypeError(message);
      }
      if (array.byteLength > 65536) {
        const err = new Error(`The ArrayBufferView's byte length (${array.byteLength}) exceeds the number of bytes of entropy available via this API (65536)`);
        err.name = 'QuotaExceededError';
        throw err;
      }
      new Uint8Array(array.buffer, array.byteOffset, array.byteLength).set(take(array.byteLength));
      return array;
    },
    randomUUID(): string {
      const b = Uint8Array.from(take(16));
      b[6] = (b[6]! & 0x0f) | 0x40;
      b[8] = (b[8]! & 0x3f) | 0x80;
      const hex = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
      return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    },
  };
}
