import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import t from 'tap';
import { islet } from '../helpers/cli';
import { ROOT } from '../helpers/server';

// Crash safety: kill -9 the server at random moments during deploys. After every restart the
// function serves its old or its new version, no half-written version is in use, and the account
// and its key are intact.
const ROUNDS = 8;
const dataDir = mkdtempSync(path.join(tmpdir(), 'islet-crash-'));
const work = mkdtempSync(path.join(tmpdir(), 'islet-crash-fn-'));

interface Running {
  child: ChildProcess;
  url: string;
  output: string;
}

function startServer(): Promise<Running> {
  // Its own process group: a crash takes the supervisor and its workers down together.
  const child = spawn(process.execPath, ['--no-node-snapshot', path.join(ROOT, 'dist', 'supervisor', 'main.js'), '--port', '0', '--data', dataDir, '--workers', '1'], {
    stdio: ['ignore', 'pipe', 'inherit'],
    detached: true,
  });
  return new Promise((resolve, reject) => {
    let output = '';
    child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${output}`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const m = /listening on (http:\/\/\S+)/.exec(output);
      if (m) {
        child.removeAllListeners('exit');
        resolve({ child, url: m[1]!, output });
      }
    });
  });
}

/** kill -9 of the supervisor and its workers at once, as a machine crash would. */
function crash(server: Running): void {
  process.kill(-server.child.pid!, 'SIGKILL');
}

function writeVersion(n: number): void {
  writeFileSync(path.join(work, 'service.yml'), 'functions:\n  durable:\n    file: function.js\n    entrypoint: handler\n    runtime: node8\n');
  writeFileSync(path.join(work, 'function.js'), `exports.handler = () => ${JSON.stringify(`v${n}`)};\n// ${'padding '.repeat(2000)}\n`);
}

t.test(`kill -9 during deploys, ${ROUNDS} times: old or new version serves, nothing half-written, nothing lost`, async (t) => {
  let server = await startServer();
  const accountId = /account id: (\S+)/.exec(server.output)?.[1];
  const apiKey = /API key:\s+(\S+)/.exec(server.output)?.[1];
  t.ok(accountId && apiKey, 'the first start printed the first account');
  const env = { PATH: process.env.PATH, HOME: work, XDG_CONFIG_HOME: path.join(work, 'config'), ISLET_ACCOUNT: accountId!, ISLET_API_KEY: apiKey! };
  writeVersion(0);
  t.equal((await islet(['deploy', 'durable', '--dir', work], { env: { ...env, ISLET_URL: server.url } })).code, 0, 'v0 deployed');
  let served = 0;
  const outcomes = { old: 0, new: 0 };
  for (let round = 1; round <= ROUNDS; round++) {
    writeVersion(round);
    const deploy = islet(['deploy', 'durable', '--dir', work], { env: { ...env, ISLET_URL: server.url } });
    // Every fourth round kills right after the CLI has the server's answer (an acknowledged deploy
    // must survive); the others at a random moment, from before the upload to after the switch.
    const acknowledged = round % 4 === 0;
    if (acknowledged) await deploy;
    else await new Promise((r) => setTimeout(r, 100 + Math.floor(Math.random() * 500)));
    crash(server);
    const result = await deploy;
    server = await startServer();
    const res = await fetch(`${server.url}/v2/run/${accountId}/durable`, { headers: { 'X-Service-Api-Key': apiKey! } });
    const body = (await res.json()) as string;
    t.equal(res.status, 200, `round ${round}: the function serves after the crash`);
    t.ok(body === `v${served}` || body === `v${round}`, `round ${round}: serves v${served} (old) or v${round} (new), got ${body}`);
    if (result.code === 0) t.equal(body, `v${round}`, `round ${round}: a deploy the CLI saw succeed is the one serving`);
    if (acknowledged) t.equal(result.code, 0, `round ${round}: the deploy finished before the kill`);
    outcomes[body === `v${round}` ? 'new' : 'old']++;
    served = Number(body.slice(1));
    const fnDir = path.join(dataDir, 'functions', accountId!, 'durable');
    const { traffic } = JSON.parse(readFileSync(path.join(fnDir, 'traffic.json'), 'utf8')) as { traffic: { version: number }[] };
    t.ok(traffic.length > 0 && traffic.every((s) => existsSync(path.join(fnDir, 'versions', String(s.version), 'manifest.json'))), `round ${round}: traffic.json names complete versions only`);
    t.same(
      readdirSync(path.join(fnDir, 'versions')).filter((d) => d.startsWith('.')),
      [],
      `round ${round}: no staging folder left after restart`,
    );
  }
  t.comment(`outcomes: ${outcomes.new} new, ${outcomes.old} old`);
  t.ok(outcomes.new >= ROUNDS / 4, 'acknowledged deploys survived the kill');
  const whoami = await fetch(`${server.url}/v2/whoami`, { headers: { 'X-Service-Api-Key': apiKey! } });
  t.same(await whoami.json(), { accountId, key: { name: 'default', scope: 'admin' } }, 'the account and its key survived every crash');
  crash(server);
});
