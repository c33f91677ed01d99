/**
 * The web platform globals of node8 functions (the WinterTC Minimum Common API) and Node's
 * `Buffer`. Each is taken from islet's libraries on first use, so a cold start pays only for what
 * the function touches; assigning one replaces it, as in a browser or Node.
 */
import { isLibraryLoading, library } from '../../sandbox/guest/libraries';
import { atob, btoa, TextDecoder, TextEncoder } from '../../sandbox/guest/text';
import type { LibraryName } from '../../sandbox/library-names';

/** `<global>: <library>#<export>` (the export is the global's own name when left out). */
const FROM_LIBRARIES = [
  'Buffer:buffer',
  'URL:url',
  'URLSearchParams:url',
  'Event:web/events',
  'EventTarget:web/events',
  'CustomEvent:web/events',
  'DOMException:web/events',
  'AbortController:web/events',
  'AbortSignal:web/events',
  'ReadableStream:web/streams',
  'ReadableStreamDefaultReader:web/streams',
  'ReadableStreamBYOBReader:web/streams',
  'ReadableStreamBYOBRequest:web/streams',
  'ReadableStreamDefaultController:web/streams',
  'ReadableByteStreamController:web/streams',
  'WritableStream:web/streams',
  'WritableStreamDefaultWriter:web/streams',
  'WritableStreamDefaultController:web/streams',
  'TransformStream:web/streams',
  'TransformStreamDefaultController:web/streams',
  'ByteLengthQueuingStrategy:web/streams',
  'CountQueuingStrategy:web/streams',
  'TextEncoderStream:web/streams',
  'TextDecoderStream:web/streams',
  'CompressionStream:web/streams',
  'DecompressionStream:web/streams',
  'Headers:web/fetch',
  'Request:web/fetch',
  'Response:web/fetch',
  'FormData:web/fetch',
  'Blob:web/fetch',
  'File:web/fetch',
  'fetch:web/fetch',
  'structuredClone:web/misc',
  'URLPattern:web/misc',
  'MessageChannel:web/misc',
  'MessagePort:web/misc',
  'MessageEvent:web/misc',
  'performance:web/misc',
  'Performance:web/misc',
  'PerformanceEntry:web/misc',
  'PerformanceMark:web/misc',
  'PerformanceMeasure:web/misc',
  'navigator:web/misc',
  'Navigator:web/misc',
  'crypto:web/subtle',
  'Crypto:web/subtle',
  'CryptoKey:web/subtle',
  'SubtleCrypto:web/subtle',
  'WebAssembly:web/misc',
];

function define(name: string, value: unknown): void {
  Object.defineProperty(globalThis, name, { value, writable: true, configurable: true, enumerable: false });
}

/** The accessor of a global made on first read: reading or assigning it turns it into a plain value. */
function lazy(name: string, lib: LibraryName, exported: string): PropertyDescriptor {
  return {
    configurable: true,
    enumerable: false,
    get() {
      if (isLibraryLoading(lib)) return undefined;
      const value = library<Record<string, unknown>>(lib)[exported];
      define(name, value);
      return value;
    },
    set(value: unknown) {
      define(name, value);
    },
  };
}

export function installGlobals(own: Record<string, unknown>): void {
  for (const [name, value] of Object.entries({ ...own, TextEncoder, TextDecoder, atob, btoa })) define(name, value);
  const descriptors: PropertyDescriptorMap = {};
  for (const entry of FROM_LIBRARIES) {
    const [name, from] = entry.split(':') as [string, string];
    const [lib, exported = name] = from.split('#') as [LibraryName, string?];
    descriptors[name] = lazy(name, lib, exported);
  }
  Object.defineProperties(globalThis, descriptors);
}
