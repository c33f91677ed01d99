// Blob, File and FormData for node8 functions (the File API and XHR specifications' objects),
// over bytes kept in the isolate.
import { utf8Decoder, utf8Encoder } from '../../../sandbox/guest/utf8';
declare const ReadableStream: new (source: object) => unknown;

type BlobPart = string | ArrayBuffer | ArrayBufferView | Blob;

const contents = new WeakMap<Blob, Uint8Array>();

/** A part as WebIDL converts it: a Blob's or a buffer's bytes as they are, anything else to a string. */
function convertPart(part: unknown): Uint8Array | string {
  if (part instanceof Blob) return contents.get(part)!;
  if (part instanceof ArrayBuffer) return new Uint8Array(part);
  if (ArrayBuffer.isView(part)) return new Uint8Array(part.buffer, part.byteOffset, part.byteLength);
  return String(part);
}

/**
 * The parts of `new Blob(parts, options)`, each converted as the iteration reaches it (a part's
 * toString that changes the array changes what comes next, as WebIDL's sequence conversion does),
 * and the options read after them, `endings` then `type`.
 */
function blobInit(parts: unknown, options: unknown, what: string): { bytes: Uint8Array; type: string } {
  const converted: (Uint8Array | string)[] = [];
  if (parts !== undefined) {
    const iterator = (typeof parts === 'object' || typeof parts === 'function') && parts !== null ? (parts as { [Symbol.iterator]?: unknown })[Symbol.iterator] : undefined;
    if (typeof iterator !== 'function') throw new TypeError(`Failed to construct '${what}': The provided value cannot be converted to a sequence.`);
    for (const part of { [Symbol.iterator]: () => iterator.call(parts) as Iterator<unknown> }) converted.push(convertPart(part));
  }
  if (options !== undefined && options !== null && typeof options !== 'object' && typeof options !== 'function') {
    throw new TypeError(`Failed to construct '${what}': The provided value is not of type '${what}PropertyBag'.`);
  }
  const bag = (options ?? {}) as { endings?: unknown; type?: unknown };
  const endingsValue = bag.endings;
  const endings = endingsValue === undefined ? 'transparent' : String(endingsValue);
  if (endings !== 'transparent' && endings !== 'native') throw new TypeError(`Failed to construct '${what}': endings must be 'transparent' or 'native', got ${JSON.stringify(endings)}`);
  const typeValue = bag.type;
  const type = typeValue === undefined ? '' : String(typeValue);
  // 'native' line endings are a Linux server's: \n.
  const bytes = converted.map((part) => (typeof part !== 'string' ? part : utf8Encoder.encode(endings === 'native' ? part.replace(/\r\n?/g, '\n') : part)));
  return { bytes: concatBytes(bytes), type: /^[\x20-\x7e]*$/.test(type) ? type.toLowerCase() : '' };
}

export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.byteLength;
  }
  return out;
}

export class Blob {
  readonly type: string;
  constructor(parts: Iterable<BlobPart> | undefined = undefined, options: { type?: string; endings?: string } | undefined = undefined) {
    const { bytes, type } = blobInit(parts, options, this instanceof File ? 'File' : 'Blob');
    contents.set(this, bytes);
    this.type = type;
  }
  get size(): number {
    return contents.get(this)!.byteLength;
  }
  slice(start = 0, end?: number, type = ''): Blob {
    const bytes = contents.get(this)!;
    const size = bytes.byteLength;
    const from = start < 0 ? Math.max(size + start, 0) : Math.min(start, size);
    const to = end === undefined ? size : end < 0 ? Math.max(size + end, 0) : Math.min(end, size);
    return new Blob([bytes.slice(from, Math.max(from, to))], { type });
  }
  async arrayBuffer(): Promise<ArrayBuffer> {
    return contents.get(this)!.slice().buffer;
  }
  async bytes(): Promise<Uint8Array> {
    return contents.get(this)!.slice();
  }
  async text(): Promise<string> {
    return utf8Decoder.decode(contents.get(this)!);
  }
  stream(): unknown {
    const bytes = contents.get(this)!;
    return new ReadableStream({
      type: 'bytes',
      start(controller: { enqueue(b: Uint8Array): void; close(): void }) {
        if (bytes.byteLength > 0) controller.enqueue(bytes.slice());
        controller.close();
      },
    });
  }
  get [Symbol.toStringTag](): string {
    return 'Blob';
  }
}

/** The bytes of a Blob (for bodies). */
export function blobBytes(blob: Blob): Uint8Array {
  return contents.get(blob)!;
}

export class File extends Blob {
  readonly name: string;
  readonly lastModified: number;
  constructor(parts: Iterable<BlobPart>, name: string, options?: { type?: string; endings?: string; lastModified?: number }) {
    if (arguments.length < 2) throw new TypeError("Failed to construct 'File': 2 arguments required.");
    super(parts, options);
    this.name = String(name);
    const lastModified = options?.lastModified;
    this.lastModified = lastModified === undefined ? Date.now() : Math.trunc(Number(lastModified)) || 0;
  }
  override get [Symbol.toStringTag](): string {
    return 'File';
  }
}

type Entry = [string, string | File];

function entryValue(value: unknown, filename?: string): string | File {
  if (value instanceof Blob) {
    if (value instanceof File && filename === undefined) return value;
    return new File([value], filename ?? (value instanceof File ? value.name : 'blob'), { type: value.type });
  }
  return String(value);
}

export class FormData {
  private entriesList: Entry[] = [];
  constructor(form?: unknown) {
    if (form !== undefined) throw new TypeError("Failed to construct 'FormData': there are no form elements here");
  }
  append(name: string, value: unknown, filename?: string): void {
    this.entriesList.push([String(name), entryValue(value, filename)]);
  }
  set(name: string, value: unknown, filename?: string): void {
    const key = String(name);
    const index = this.entriesList.findIndex(([n]) => n === key);
    const entry: Entry = [key, entryValue(value, filename)];
    if (index === -1) {
      this.entriesList.push(entry);
      return;
    }
    this.entriesList = this.entriesList.filter(([n], i) => n !== key || i === index);
    this.entriesList[this.entriesList.findIndex(([n]) => n === key)] = entry;
  }
  get(name: string): string | File | null {
    return this.entriesList.find(([n]) => n === String(name))?.[1] ?? null;
  }
  getAll(name: string): (string | File)[] {
    return this.entriesList.filter(([n]) => n === String(name)).map(([, v]) => v);
  }
  has(name: string): boolean {
    return this.entriesList.some(([n]) => n === String(name));
  }
  delete(name: string): void {
    this.entriesList = this.entriesList.filter(([n]) => n !== String(name));
  }
  forEach(callback: (value: string | File, name: string, parent: FormData) => void, thisArg?: unknown): void {
    for (const [name, value] of this.entriesList) callback.call(thisArg, value, name, this);
  }
  *entries(): IterableIterator<Entry> {
    yield* this.entriesList.map((e) => [...e] as Entry);
  }
  *keys(): IterableIterator<string> {
    for (const [name] of this.entriesList) yield name;
  }
  *values(): IterableIterator<string | File> {
    for (const [, value] of this.entriesList) yield value;
  }
  [Symbol.iterator](): IterableIterator<Entry> {
    return this.entries();
  }
  get [Symbol.toStringTag](): string {
    return 'FormData';
  }
}

/** A FormData as a multipart/form-data body, with its boundary. */
export function encodeMultipart(form: FormData): { bytes: Uint8Array; type: string } {
  const boundary = `----islet-formdata-${Math.random().toString(16).slice(2)}${Math.random().toString(16).slice(2)}`;
  const encoder = utf8Encoder;
  const escape = (s: string) => s.replace(/\r/g, '%0D').replace(/\n/g, '%0A').replace(/"/g, '%22');
  const parts: Uint8Array[] = [];
  for (const [name, value] of form) {
    if (typeof value === 'string') {
      parts.push(encoder.encode(`--${boundary}\r\nContent-Disposition: form-data; name="${escape(name)}"\r\n\r\n${value.replace(/\r(?!\n)|(?<!\r)\n/g, '\r\n')}\r\n`));
    } else {
      parts.push(
        encoder.encode(
          `--${boundary}\r\nContent-Disposition: form-data; name="${escape(name)}"; filename="${escape(value.name)}"\r\nContent-Type: ${value.type || 'application/octet-stream'}\r\n\r\n`,
        ),
      );
      parts.push(blobBytes(value), encoder.encode('\r\n'));
    }
  }
  parts.push(encoder.encode(`--${boundary}--\r\n`));
  return { bytes: concatBytes(parts), type: `multipart/form-data; boundary=${boundary}` };
}

function indexOf(haystack: Uint8Array, needle: Uint8Array, from: number): number {
  outer: for (let i = from; i <= haystack.length - needle.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

/** Parses a multipart/form-data body (RFC 7578). */
export function decodeMultipart(bytes: Uint8Array, contentType: string): FormData {
  const m = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  if (!m) throw new TypeError('Could not parse content as FormData: no multipart boundary');
  const encoder = utf8Encoder;
  const decoder = utf8Decoder;
  const delimiter = encoder.encode(`--${m[1] ?? m[2]}`);
  const form = new FormData();
  let at = indexOf(bytes, delimiter, 0);
  if (at === -1) throw new TypeError('Could not parse content as FormData');
  for (;;) {
    const start = at + delimiter.length;
    if (bytes[start] === 45 && bytes[start + 1] === 45) break;
    const headerEnd = indexOf(bytes, encoder.encode('\r\n\r\n'), start);
    const next = indexOf(bytes, delimiter, start);
    if (headerEnd === -1 || next === -1) throw new TypeError('Could not parse content as FormData');
    const headers = decoder.decode(bytes.subarray(start + 2, headerEnd));
    const body = bytes.subarray(headerEnd + 4, next - 2);
    const disposition = /content-disposition:\s*form-data;([^\r\n]*)/i.exec(headers)?.[1] ?? '';
    const name = /\bname="([^"]*)"/i.exec(disposition)?.[1] ?? '';
    const filename = /\bfilename="([^"]*)"/i.exec(disposition)?.[1];
    const type = /content-type:\s*([^\r\n]*)/i.exec(headers)?.[1] ?? '';
    if (filename === undefined) form.append(name, decoder.decode(body));
    else form.append(name, new File([body.slice()], filename, { type }));
    at = next;
  }
  return form;
}
