// URL and URLSearchParams (whatwg-url), evaluated in an isolate only when a function first uses
// them: whatwg-url's tables would otherwise cost every isolate ~1 MB (see engine/isolate/libraries.ts).
export { URL, URLSearchParams } from 'whatwg-url';
