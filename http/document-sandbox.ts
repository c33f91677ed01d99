import { contentTypeOf, JSON_HEADERS } from '../engine/response';

/**
 * Every function shares the server's origin with every other account's functions and with the
 * console, whose tab keeps its signed-in key in sessionStorage. A function's page opened in that
 * tab, or any page of one tenant's, could otherwise read what the origin keeps (the console's key,
 * another tenant's storage and cookies). So a response a browser would render as a document that
 * runs script carries a Content-Security-Policy `sandbox`: the page still runs its scripts, forms
 * and popups, but in an origin of its own.
 */
export const DOCUMENT_SANDBOX = 'sandbox allow-downloads allow-forms allow-modals allow-popups allow-scripts';

/** HTML, XHTML, SVG and XML: what a browser renders as a document that can run script. */
const ACTIVE_TYPE = /^\s*(text\/html|application\/xhtml\+xml|image\/svg\+xml|text\/xml|application\/xml)\s*(;|$)/i;

/** Whether a response with these headers needs the sandbox: an active type, or no type (a browser may sniff one). */
export function needsDocumentSandbox(headers: Record<string, string>): boolean {
  // A returned value's JSON, the common answer, at the cost of a comparison.
  if (headers === JSON_HEADERS) return false;
  const type = contentTypeOf(headers);
  return type === undefined || ACTIVE_TYPE.test(type);
}
