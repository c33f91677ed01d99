import { setFlagsFromString } from 'node:v8';

/**
 * V8 flags of every process that serves (the workers, and the bench's server, which must run as
 * they do). A young generation of 2 × 4 MB instead of Node's 2 × 16 MB: the server allocates in
 * bursts (a deploy, a load of calls), after which Node keeps the grown young generation resident.
 * Measured with 1,000 warm node8 functions after 100 calls each: RSS 1,520-1,570 MB (six runs)
 * against 1,504-1,509 MB; 103 MB instead of 111 MB after the deploys; the warm hello's rate within
 * the run-to-run spread (A/B of two servers each: 35,468 and 38,379 against 35,048 and 37,576 rps).
 */
export const SERVER_V8_FLAGS = ['--max-semi-space-size=4'];

/**
 * Language features isolates get that Node 20's V8 has behind a flag: `ArrayBuffer.prototype.transfer`
 * (ES2024, shipped in V8 11.4). Byte streams transfer every chunk they are given: without it the
 * streams polyfill fell back to `structuredClone`, in JavaScript, and a 1 MiB chunk took 300 ms to
 * enqueue (a fetch answer of 1 MiB took 0.3 s to arrive). Read when a context is made, so the
 * server's own context keeps Node's defaults.
 */
export function enableIsolateFeatures(): void {
  setFlagsFromString('--harmony-rab-gsab-transfer');
  // `gc` on each isolate's global, which the node8 runtime takes before user code runs (and
  // engine/isolate/bridge.ts deletes): WebAssembly memories that are garbage but not yet collected
  // would count against a function's limit (see engine/node8/sandbox/wasm-memories.ts).
  setFlagsFromString('--expose-gc');
}

/**
 * isolated-vm on Node 20 needs `--no-node-snapshot`; without it the process can crash. Every islet
 * entry point passes the flag; this check turns a forgotten flag into a clear error.
 */
export function checkNodeFlags(): void {
  const major = Number(process.versions.node.split('.')[0]);
  if (major >= 20 && !process.execArgv.includes('--no-node-snapshot') && !/--no-node-snapshot/.test(process.env.NODE_OPTIONS ?? '')) {
    throw new Error('islet must run with `node --no-node-snapshot` on Node.js 20+ (isolated-vm requires it); use `npm start` or the `islet` command');
  }
}
