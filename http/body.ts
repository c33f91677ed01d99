import type { HttpResponse } from '@trufflesuite/uws-js-unofficial';

const EMPTY = Buffer.alloc(0);

/**
 * Reads a request body from uWS up to `limit` bytes. Calls `onBody` with the whole body, or
 * `onTooLarge` as soon as the declared or received size passes the limit (the rest is ignored).
 * Requests without Content-Length or Transfer-Encoding have no body.
 */
export function readBody(res: HttpResponse, headers: Record<string, string>, limit: number, onBody: (body: Buffer) => void, onTooLarge: () => void): void {
  const declared = headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    onTooLarge();
    return;
  }
  if (!hasBody(headers)) {
    onBody(EMPTY);
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let refused = false;
  res.onData((chunk, isLast) => {
    if (refused) return;
    size += chunk.byteLength;
    if (size > limit) {
      refused = true;
      onTooLarge();
      return;
    }
    // uWS reuses the chunk's memory after this callback returns: copy it.
    chunks.push(Buffer.from(new Uint8Array(chunk)));
    if (isLast) onBody(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
  });
}

/** Whether a request declares a body (Content-Length over 0, or chunked). */
export function hasBody(headers: Record<string, string>): boolean {
  const declared = headers['content-length'];
  return (declared !== undefined && declared !== '0') || headers['transfer-encoding'] !== undefined;
}

/** Reads every header of a uWS request (names arrive lower-case; repeats are joined with `, `). */
export function readHeaders(req: { forEach(cb: (name: string, value: string) => void): void }): Record<string, string> {
  const headers: Record<string, string> = {};
  req.forEach((name, value) => {
    const prior = headers[name];
    headers[name] = prior === undefined ? value : `${prior}, ${value}`;
  });
  return headers;
}

/**
 * Every header of a call, without its key (`X-Service-Api-Key`), which is handed on apart and
 * never reaches the function.
 */
export function readCallHeaders(req: { forEach(cb: (name: string, value: string) => void): void }): { headers: Record<string, string>; apiKey: string | undefined } {
  const headers: Record<string, string> = {};
  let apiKey: string | undefined;
  req.forEach((name, value) => {
    if (name === 'x-service-api-key') {
      apiKey = apiKey === undefined ? value : `${apiKey}, ${value}`;
      return;
    }
    const prior = headers[name];
    headers[name] = prior === undefined ? value : `${prior}, ${value}`;
  });
  return { headers, apiKey };
}
