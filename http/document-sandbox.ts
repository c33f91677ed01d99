import { JSON_HEADERS } from '../engine/response';

/**
 * Every account's functions share the function port's origin. A function's page that a browser
 * renders as a document, with script, could read or write what that origin keeps for every
 * tenant (cookies, storage) or act as any of them. So every answer that a browser might render as
 * a document carries a Content-Security-Policy `sandbox`: the page still runs its scripts, forms
 * and popups, but in an opaque origin of its own. (The console has an origin of its own: see
 * http/console-app.ts.)
 */
export const DOCUMENT_SANDBOX = 'sandbox allow-downloads allow-forms allow-modals allow-popups allow-scripts';

/** The server owns it: every answer says `nosniff`, once (Chromium reads a repeated header as one value, `nosniff, x`, which is not `nosniff`). */
export const NOSNIFF_HEADER = 'x-content-type-options';

/** HTTP token code points (RFC 9110), which a MIME type's type and subtype are made of. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** HTTP whitespace (Fetch): what parsing a MIME type strips around it. */
const HTTP_WHITESPACE = /^[\t\n\r ]+|[\t\n\r ]+$/g;

/** `text/*` types that render as text, never as a document. */
const TEXT_TYPES = new Set(['plain', 'csv', 'css', 'javascript']);
/** `application/*` types that render as text, download, or open in a viewer of their own. */
const APPLICATION_TYPES = new Set(['json', 'octet-stream', 'javascript']);

/**
 * Whether a browser could render an answer with these headers as a document. It is not, and
 * needs no sandbox, only when every MIME type it names is a known non-document type: Fetch's
 * "extract a MIME type" takes every Content-Type header (any case of the name, any number of
 * them), splits their values on commas and keeps the last valid one, so each one is judged. No
 * Content-Type at all, an empty or invalid value, a list item that does not parse, `*\/*` or any
 * type not on the list: sandbox (a browser sniffs, or renders it as it will).
 */
export function needsDocumentSandbox(headers: Record<string, string>): boolean {
  // A returned value's JSON, the common answer, at the cost of a comparison.
  if (headers === JSON_HEADERS) return false;
  let typed = false;
  for (const name in headers) {
    if (name.length !== 12 || name.toLowerCase() !== 'content-type') continue;
    typed = true;
    if (!onlyNonDocumentTypes(headers[name]!)) return true;
  }
  return !typed;
}

/**
 * Verdicts of the values seen lately: a server sees few distinct Content-Type values. An answer's
 * headers (text/plain; charset=utf-8) took 0.7-0.8 us to write with the parse, 0.1-0.16 us with
 * the lookup, as before the parse (measured on a sink). Emptied when full, so a tenant sending
 * ever new values costs the parse and no memory.
 */
const verdicts = new Map<string, boolean>();
const VERDICTS_KEPT = 256;

/**
 * Each item of a Content-Type value (split on every comma: a comma inside a quoted parameter then
 * makes a piece that does not parse, which errs towards the sandbox) parses as a MIME type whose
 * essence is a non-document type.
 */
function onlyNonDocumentTypes(value: string): boolean {
  let verdict = verdicts.get(value);
  if (verdict !== undefined) return verdict;
  verdict = value.split(',').every((item) => {
    const essence = essenceOf(item);
    return essence !== undefined && isNonDocument(essence[0], essence[1]);
  });
  if (verdicts.size >= VERDICTS_KEPT) verdicts.clear();
  verdicts.set(value, verdict);
  return verdict;
}

/**
 * The type and subtype of a MIME type, lower-case, as the MIME Sniffing standard parses one: HTTP
 * whitespace stripped around it, the type up to `/`, the subtype up to `;` less its trailing
 * whitespace, both non-empty HTTP tokens (parameters are not needed to judge). Undefined when
 * the value does not parse.
 */
export function essenceOf(item: string): [string, string] | undefined {
  const input = item.replace(HTTP_WHITESPACE, '');
  const slash = input.indexOf('/');
  if (slash <= 0) return undefined;
  const type = input.slice(0, slash);
  const semicolon = input.indexOf(';', slash + 1);
  const subtype = (semicolon === -1 ? input.slice(slash + 1) : input.slice(slash + 1, semicolon)).replace(HTTP_WHITESPACE, '');
  if (!TOKEN.test(type) || !TOKEN.test(subtype)) return undefined;
  return [type.toLowerCase(), subtype.toLowerCase()];
}

/**
 * The known non-document types (README, "Calling a function"): JSON and `+json`; text/plain,
 * text/csv, text/css, text/javascript; images but SVG; audio, video and fonts;
 * application/octet-stream and application/javascript. Any `+xml` type is a document: Chromium
 * renders it as XML, which runs script in the XHTML namespace and through XSLT. A PDF is not on
 * the list: what runs in one is each browser's viewer's affair, and Chromium 156 shows a
 * sandboxed PDF as it shows any other.
 */
export function isNonDocument(type: string, subtype: string): boolean {
  if (subtype.endsWith('+xml')) return false;
  switch (type) {
    case 'text':
      return TEXT_TYPES.has(subtype);
    case 'application':
      return APPLICATION_TYPES.has(subtype) || subtype.endsWith('+json');
    case 'image':
      return !subtype.startsWith('svg');
    case 'audio':
    case 'video':
    case 'font':
      return true;
    default:
      return false;
  }
}
