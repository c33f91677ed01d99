// Bundled on its own (dist/engine/node8/url-lib.js) and evaluated in an isolate only when a function
// first uses URL or URLSearchParams: whatwg-url's tables would otherwise cost every isolate ~1 MB
// (see engine/isolate/libraries.ts).
export { URL, URLSearchParams } from 'whatwg-url';
