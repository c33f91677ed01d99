import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import t from 'tap';
import { islet, ISLET_BIN } from '../helpers/cli';
import { ROOT } from '../helpers/server';

// Issue 26: the README's quick start, followed to the letter by its own commands (read from the
// README, not copied here), each printed line checked against what the README says of it. A line
// added to the quick start that this test does not know fails it, so the two stay together.

const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');

/** The first ```sh block after `marker`, as commands with their `# comment`s. */
function shBlock(marker: string): { command: string; comment: string }[] {
  const at = README.indexOf(marker);
  if (at < 0) throw new Error(`README.md has no "${marker}"`);
  const block = /```sh\n([\s\S]*?)```/.exec(README.slice(at));
  if (!block) throw new Error(`README.md has no sh block after "${marker}"`);
  return block[1]!
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => {
      const hash = line.search(/\s#\s/);
      return hash < 0
        ? { command: line.trim(), comment: '' }
        : {
            command: line.slice(0, hash).trim(),
            comment: line
              .slice(hash)
              .replace(/^\s#\s/, '')
              .trim(),
          };
    });
}

let server: ChildProcess | undefined;
t.teardown(() => {
  server?.kill('SIGTERM');
});

t.test('the quick start of "The islet command", line by line', async (t) => {
  const lines = shBlock('From nothing to a deployed function:');
  const work = mkdtempSync(path.join(tmpdir(), 'islet-readme-'));
  const env: NodeJS.ProcessEnv = { PATH: `${path.dirname(ISLET_BIN)}:${process.env.PATH}`, HOME: work, XDG_CONFIG_HOME: path.join(work, 'config') };
  let url = '';
  let accountId = '';
  let apiKey = '';
  const run = async (command: string) => {
    const args = command
      .split(/\s+/)
      .slice(1)
      .map((a) => a.replace('<id>', accountId).replace('<key>', apiKey).replace('http://127.0.0.1:8080', url));
    return islet(args, { cwd: work, env });
  };

  for (const { command, comment } of lines) {
    const verb = command.split(/\s+/).slice(0, 2).join(' ');
    if (command === 'islet serve &') {
      t.equal(comment, 'or npm start; prints the first account id and key');
      // The same command, on a free port and a data folder of its own, one worker (the quick start's
      // flags are its defaults: 8080 and ./.islet-data).
      server = spawn(ISLET_BIN, ['serve', '--port', '0', '--data', path.join(work, 'data'), '--workers', '1'], { cwd: work, env, stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      await new Promise<void>((resolve, reject) => {
        server!.once('exit', (code) => reject(new Error(`islet serve exited with ${code}: ${out}`)));
        server!.stdout!.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          if (/console on /.test(out)) resolve();
        });
      });
      accountId = /account id: (\S+)/.exec(out)?.[1] ?? '';
      apiKey = /API key: +(\S+)/.exec(out)?.[1] ?? '';
      url = /islet listening on (http:\/\/\S+)/.exec(out)?.[1] ?? '';
      t.ok(accountId && apiKey && url, `it prints the first account id and key: ${out}`);
      continue;
    }
    const result = await run(command);
    t.equal(result.code, 0, `${command}: ${result.stderr}`);
    switch (verb) {
      case 'islet login':
        t.match(result.stdout, `Logged in to ${url} as account ${accountId}`);
        break;
      case 'islet create': {
        t.equal(comment, './hello/function.js and ./hello/service.yml');
        for (const file of comment.split(' and ')) t.ok(existsSync(path.join(work, file)), `${command} makes ${file}`);
        break;
      }
      case 'islet deploy': {
        const version = /^version (\d+)/.exec(comment)?.[1];
        t.ok(version, `the README says which version "${command}" makes`);
        t.match(result.stdout, new RegExp(`^Deployed function hello \\(version ${version}\\)\\n`), `${command}: ${comment}`);
        const split = /^version (\d+) gets (\d+)% of the calls, version (\d+) the rest$/.exec(comment);
        if (split) {
          const serving = /^hello: (.*)$/m.exec(result.stdout)?.[1] ?? '';
          t.match(serving, new RegExp(`version ${split[1]} serves ${split[2]}%`), comment);
          t.match(serving, new RegExp(`version ${split[3]} serves ${100 - Number(split[2])}%`), comment);
        } else t.equal(comment, `version ${version}`);
        // The printed invoke line runs as it is printed.
        const invokeLine = /^ {2}(islet invoke .*)$/m.exec(result.stdout)?.[1];
        t.equal(invokeLine, 'islet invoke hello');
        break;
      }
      case 'islet invoke':
        t.equal(result.stdout, `${comment}\n`, `${command} prints ${comment}`);
        break;
      case 'islet logs':
        t.match(result.stdout, /CALL\s+POST 200 [\d.]+ ms handler, [\d.]+ ms total/, 'the call just made');
        break;
      case 'islet promote':
        t.equal(comment, '...then all of them (or "islet rollback hello")');
        t.equal(result.stdout, 'hello: version 2 serves all calls\n');
        break;
      case 'islet stats':
        t.equal(comment, 'rate, errors, p50/p99 over the last 5 minutes');
        for (const [what, shown] of [
          ['the rate', /calls +\d+ \(\d+(\.\d+)?\/s\)/],
          ['errors', /^ +errors +\d+/m],
          ['p50', /^ +p50 +[\d.]+ m?s$/m],
          ['p99', /^ +p99 +[\d.]+ m?s$/m],
          ['the last 5 minutes', /^hello, last 5m:/],
        ] as const) {
          t.match(result.stdout, shown, `stats shows ${what}`);
        }
        break;
      case 'islet remove':
        t.equal(result.stdout, 'Removed function hello\n');
        break;
      default:
        t.fail(`the quick start has a line this test does not check: ${command}`);
    }
  }

  // "Calling a function": its curl line, with the account and key of this server.
  const calling = shBlock('## Calling a function');
  t.equal(calling.length, 2, 'a command and what it prints');
  await run('islet deploy hello');
  const printed = await new Promise<string>((resolve, reject) =>
    execFile('bash', ['-c', calling[0]!.command.replace('http://127.0.0.1:8080', url)], { env: { ...env, KEY: apiKey, ACCOUNT: accountId }, cwd: work }, (err, stdout, stderr) =>
      err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout),
    ),
  );
  t.equal(printed, calling[1]!.command, `${calling[0]!.command} prints what the README shows`);
});
