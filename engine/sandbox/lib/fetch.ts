// Bundled on its own (dist/engine/node8/fetch-lib.js): the Headers class of fetch, evaluated in an
// isolate on first use of Headers, Response or fetch (see engine/isolate/libraries.ts).
export { Headers } from 'whatwg-fetch';
