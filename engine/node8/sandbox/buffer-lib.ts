// Bundled on its own (dist/engine/node8/buffer-lib.js): Node's Buffer for functions, evaluated in an
// isolate on first use of Buffer or request.body (see engine/isolate/libraries.ts).
export { Buffer } from 'buffer';
