import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { freePort } from './free-port';
import { removeDir } from './server';
import { countAnswer, eachWptTest, emptyResult, HARNESS, type HarnessAnswer, type ManifestTest, WPT_DEADLINE_MS, WPT_DIR, wptOrder, type WptFileResult } from './wpt';

/**
 * The second control of the web-platform-tests: the same files and harness in workerd, Cloudflare's
 * Workers runtime, given as a binary (`npm run wpt -- --workerd <path>`; npm's `workerd` package
 * has one). It is not a dependency of the project: it measures where islet stands against it.
 *
 * Each file is a worker of its own in a workerd process of its own (a fresh global, as each islet
 * function has), with `nodejs_compat` and the compatibility date the binary supports. workerd
 * refuses eval, so the harness evaluates through its unsafe-eval binding, which runs a global
 * script as indirect eval does in islet and Node. Timers and fetch are refused at a worker's top
 * level, so the file runs inside a request, as in islet.
 */
const WORKER = `import order from './order.json';
import files from './files.json';
${HARNESS}
export default {
  async fetch(request, env) {
    // workerd's global is a ServiceWorkerGlobalScope, where the harness counts the file loaded at
    // its install event: fired once the file is evaluated, as a browser does after the script.
    setTimeout(() => self.dispatchEvent(new Event('install')), 0);
    const answer = await runHarness(order, (file) => files[file], (code, name) => env.UNSAFE_EVAL.eval(code, name))
      .catch((err) => ({ tests: [], status: 1, message: String((err && err.stack) || err) }));
    return Response.json(answer);
  },
};
`;

function config(port: number, date: string): string {
  return `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .wpt) ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);
const wpt :Workerd.Worker = (
  modules = [
    (name = "worker.js", esModule = embed "worker.js"),
    (name = "order.json", json = embed "order.json"),
    (name = "files.json", json = embed "files.json"),
  ],
  compatibilityDate = "${date}",
  compatibilityFlags = ["nodejs_compat"],
  bindings = [ (name = "UNSAFE_EVAL", unsafeEval = void) ],
);
`;
}

/** The newest compatibility date the binary supports: `workerd --version` prints it. */
export function workerdVersion(binary: string): string {
  const out = spawnSync(binary, ['--version'], { encoding: 'utf8' });
  const date = /\d{4}-\d{2}-\d{2}/.exec(out.stdout ?? '')?.[0];
  if (!date) throw new Error(`${binary} --version printed no date: ${(out.stderr || out.stdout || String(out.error)).slice(0, 200)}`);
  return date;
}

/** Asks the worker until its socket answers (workerd prints nothing when it is ready). */
async function askWhenListening(url: string, until: number, exited: () => string | undefined): Promise<HarnessAnswer> {
  for (;;) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(WPT_DEADLINE_MS + 10_000) });
      return (await res.json()) as HarnessAnswer;
    } catch (err) {
      const why = exited();
      if (why) throw new Error(why);
      if ((err as Error).name === 'TimeoutError' || Date.now() > until) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

async function runFileInWorkerd(binary: string, date: string, test: ManifestTest): Promise<WptFileResult> {
  const result = emptyResult(test);
  const dir = mkdtempSync(path.join(tmpdir(), 'islet-wpt-workerd-'));
  const order = wptOrder(test);
  const files = Object.fromEntries([order.harness, ...order.scripts, ...order.data].map((f) => [f, readFileSync(path.join(WPT_DIR, f), 'utf8')]));
  const port = await freePort();
  writeFileSync(path.join(dir, 'worker.js'), WORKER);
  writeFileSync(path.join(dir, 'order.json'), JSON.stringify(order));
  writeFileSync(path.join(dir, 'files.json'), JSON.stringify(files));
  writeFileSync(path.join(dir, 'config.capnp'), config(port, date));
  const child = spawn(binary, ['serve', 'config.capnp', '--experimental'], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    if (stderr.length < 2000) stderr += chunk.toString();
  });
  let exit: string | undefined;
  child.once('exit', (code, signal) => {
    exit = `workerd exited (${signal ?? code}) before the harness answered: ${stderr.trim().split('\n').slice(0, 2).join(' ').slice(0, 300)}`;
  });
  child.once('error', (err) => {
    exit = `workerd could not start: ${String(err).slice(0, 300)}`;
  });
  try {
    countAnswer(result, await askWhenListening(`http://127.0.0.1:${port}/`, Date.now() + 20_000, () => exit));
  } catch (err) {
    result.harness = (err as Error).message.slice(0, 300);
    result.total = Math.max(result.total, 1);
  } finally {
    child.kill('SIGKILL');
    removeDir(dir);
  }
  return result;
}

/** Runs the vendored tests (those whose file matches `only`) in workerd, `concurrency` at a time. */
export async function runWptInWorkerd(binary: string, options: { only?: RegExp; concurrency?: number } = {}): Promise<WptFileResult[]> {
  const date = workerdVersion(binary);
  return eachWptTest(options.only, options.concurrency ?? 2, (test) => runFileInWorkerd(binary, date, test));
}
