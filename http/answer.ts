import type { InvokeResponse } from '../engine/api';
import { HEADER_LINES, isSetCookie } from '../engine/response';
import { DOCUMENT_SANDBOX, needsDocumentSandbox, NOSNIFF_HEADER } from './document-sandbox';

/** Where a function's answer headers go: a uWS response, or the console's copy of them. */
export interface HeaderSink {
  writeHeader(name: string, value: string): unknown;
}

/**
 * Writes the headers of a function's answer as the function port sends them: `nosniff` (the
 * server's alone: a function's own value is dropped), the function's headers, the `X-Service-*`
 * ones (SPEC §2; X-Service-Version once a version was chosen) and the sandbox of anything a
 * browser may render as a document (http/document-sandbox.ts). The console's invoke route shows
 * the same list, so what it shows is what a client of the function port gets.
 */
export function writeAnswerHeaders(out: HeaderSink, response: InvokeResponse): void {
  const { headers } = response;
  out.writeHeader('X-Content-Type-Options', 'nosniff');
  for (const name in headers) if (name.length !== 22 || name.toLowerCase() !== NOSNIFF_HEADER) writeHeaderLines(out, name, headers[name]!);
  out.writeHeader('X-Service-Request-ID', response.requestId);
  out.writeHeader('X-Service-Duration-Usecs', response.durationUs.toFixed(3));
  if (response.version !== undefined) out.writeHeader('X-Service-Version', String(response.version));
  if (needsDocumentSandbox(headers)) out.writeHeader('Content-Security-Policy', DOCUMENT_SANDBOX);
}

/** A header as its lines: one for each value of a `Set-Cookie` set several times (see HEADER_LINES), one otherwise. */
export function writeHeaderLines(out: HeaderSink, name: string, value: string): void {
  if (isSetCookie(name) && value.includes(HEADER_LINES)) for (const line of value.split(HEADER_LINES)) out.writeHeader(name, line);
  else out.writeHeader(name, value);
}
