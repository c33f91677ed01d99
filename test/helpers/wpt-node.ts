import { spawn } from 'node:child_process';
import { countAnswer, eachWptTest, emptyResult, HARNESS, type HarnessAnswer, type ManifestTest, WPT_DEADLINE_MS, WPT_DIR, wptOrder, type WptFileResult } from './wpt';

/**
 * The control of the web-platform-tests: the same files and the same harness run (`HARNESS`) in
 * plain Node, each in a process of its own (a fresh global with Node's web globals, as each islet
 * function has a fresh isolate; not a worker thread, because Node 20 aborts the whole process on
 * Blob-slice-overflow.any.js: `Assertion failed: args[0]->IsUint32()` in node::Blob::ToSlice).
 * Node has no `self`, which testharness.js needs, so it gets one; an uncaught error or an unhandled
 * rejection is ignored, as a browser worker reports it and goes on. What fails only for the harness's surroundings (a page, a server, XMLHttpRequest)
 * fails here as in islet, so the subtests Node passes are the yardstick of islet's share.
 */
const CHILD = `const workerData = JSON.parse(process.env.WPT_ORDER);
const fs = require('node:fs');
const path = require('node:path');
const read = (file) => fs.readFileSync(path.join(workerData.root, file), 'utf8');
globalThis.self = globalThis;
process.on('uncaughtException', () => {});
process.on('unhandledRejection', () => {});
${HARNESS}
const answer = (message) => process.send(message, () => process.exit(0));
runHarness(workerData.order, read).then(answer, (err) => answer({ tests: [], status: 1, message: String(err && err.stack || err) }));
`;

/** A process still running this long after the harness's own deadline is stopped. */
const STOP_AFTER_MS = WPT_DEADLINE_MS + 10_000;

function runFileInNode(test: ManifestTest): Promise<WptFileResult> {
  const result = emptyResult(test);
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['-e', CHILD], {
      env: { ...process.env, WPT_ORDER: JSON.stringify({ root: WPT_DIR, order: wptOrder(test) }) },
      // What the tests print (console.log in a test) is not the report's.
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      if (stderr.length < 2000) stderr += chunk.toString();
    });
    let settled = false;
    const finish = (harness?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(stop);
      if (harness !== undefined) {
        result.harness = harness;
        result.total = Math.max(result.total, 1);
      }
      child.kill('SIGKILL');
      resolve(result);
    };
    const stop = setTimeout(() => finish(`still running after ${STOP_AFTER_MS / 1000} s in Node`), STOP_AFTER_MS);
    child.once('message', (answer: HarnessAnswer) => {
      countAnswer(result, answer);
      finish();
    });
    child.once('error', (err) => finish(`Node could not start: ${String(err).slice(0, 300)}`));
    child.once('exit', (code, signal) => finish(`Node exited (${signal ?? code}) before the harness answered: ${stderr.trim().split('\n').slice(0, 2).join(' ').slice(0, 300)}`));
  });
}

/** Runs the vendored tests (those whose file matches `only`) in Node, `concurrency` at a time. */
export async function runWptInNode(options: { only?: RegExp; concurrency?: number } = {}): Promise<WptFileResult[]> {
  return eachWptTest(options.only, options.concurrency ?? 2, (test) => runFileInNode(test));
}
