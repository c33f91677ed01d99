import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import t from 'tap';
import { parseServeOptions } from '../../supervisor/options';
import { SETTINGS, settingsTable } from '../../supervisor/settings';
import { islet } from '../helpers/cli';
import { ROOT } from '../helpers/server';

// `islet serve`'s settings are declared once (supervisor/settings.ts): the README's table, the
// parser and the CLI's help are made from that list, and agree with it.

t.test("the README's table of settings is the one the declarations make", async (t) => {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const block = /<!-- settings:start -->\n([\s\S]*?)\n<!-- settings:end -->/.exec(readme)?.[1];
  t.equal(block, settingsTable(), 'README.md and supervisor/settings.ts disagree: run node scripts/settings-table.js');
});

t.test('every setting is read from its flag, and from its environment variable when the flag is not given', async (t) => {
  const sample = (type: string, min = 0, max = Infinity) => (type === 'int' ? String(Math.min(max, Math.max(min, 3) + 1021)) : 'x');
  for (const setting of SETTINGS.filter((s) => s.type !== 'switch')) {
    const value = setting.flag === 'console-origin' ? 'https://console.example.com' : setting.flag.endsWith('port') ? '9001' : (setting.choices?.[0] ?? sample(setting.type, setting.min, setting.max));
    const fromFlag = parseServeOptions([`--${setting.flag}`, value]);
    const before = setting.env === undefined ? undefined : process.env[setting.env];
    let fromEnv: ReturnType<typeof parseServeOptions> | undefined;
    if (setting.env) {
      process.env[setting.env] = value;
      try {
        fromEnv = parseServeOptions([]);
      } finally {
        if (before === undefined) delete process.env[setting.env];
        else process.env[setting.env] = before;
      }
      t.same(fromEnv, fromFlag, `$${setting.env} reads as --${setting.flag}`);
    }
    t.notSame(fromFlag, parseServeOptions([]), `--${setting.flag} changes something`);
    if (setting.limit) t.equal(fromFlag.limits[setting.limit.name], Number(value) * (setting.limit.factor ?? 1), `--${setting.flag} reaches the workers' limit ${setting.limit.name}`);
  }
  t.equal(parseServeOptions(['--allow-private-egress']).allowPrivateEgress, true);
  t.equal(parseServeOptions(['--no-metrics']).metrics, false);
});

t.test('a value out of bounds names the flag and the bounds', async (t) => {
  for (const setting of SETTINGS.filter((s) => s.type === 'int')) {
    t.throws(() => parseServeOptions([`--${setting.flag}=${(setting.min ?? 0) - 1}`]), { message: new RegExp(`^--${setting.flag}: "-?\\d+" is not a whole number from ${setting.min ?? 0}`) });
  }
});

t.test("a word that is not among a setting's choices names the flag and the choices", async (t) => {
  t.equal(parseServeOptions([]).logLevel, 'info');
  t.equal(parseServeOptions(['--log-level', 'debug']).logLevel, 'debug');
  t.throws(() => parseServeOptions(['--log-level', 'loud']), { message: '--log-level: "loud" is not one of fatal, error, warn, info, debug, trace, silent' });
});

t.test('islet serve --help lists every setting with its default', async (t) => {
  const { stdout } = await islet(['serve', '--help']);
  for (const setting of SETTINGS) t.match(stdout, `--${setting.flag}`, `--${setting.flag} is in the help`);
  t.match(stdout, '--host-work-threads <n>');
});
