import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import t from 'tap';
import { cliWorkspace, islet, serviceFolder } from '../helpers/cli';
import { startTestServer, type TestServer } from '../helpers/server';

// The islet CLI with Python functions: what a Python bundle leaves out, and how a module-level error
// at deploy is reported (the function's file and line, its traceback; not service.yml).
let s: TestServer;
let env: NodeJS.ProcessEnv;
let work: string;

t.before(async () => {
  s = await startTestServer();
  ({ work, env } = cliWorkspace(s));
});
t.teardown(() => s.stop());

function folder(yml: string, files: Record<string, string>): string {
  return serviceFolder(work, yml, files);
}

t.test('a Python deploy leaves out __pycache__ and native libraries, and names the line of a module-level error', async (t) => {
  const yml = 'functions:\n  py_pack:\n    file: function.py\n    entrypoint: handler\n    runtime: python2\n';
  const dir = folder(yml, {
    'function.py': 'import os\n\ndef handler(body, req):\n    return sorted(os.listdir("/function")) + sorted(os.listdir("/function/pkg"))\n',
  });
  mkdirSync(path.join(dir, 'pkg', '__pycache__'), { recursive: true });
  writeFileSync(path.join(dir, 'pkg', '__init__.py'), '');
  writeFileSync(path.join(dir, 'pkg', '__pycache__', '__init__.cpython-311.pyc'), 'x');
  writeFileSync(path.join(dir, 'pkg', '_speedups.cpython-311-x86_64-linux-gnu.so'), 'x');
  const deployed = await islet(['deploy', 'py_pack', '--dir', dir], { env });
  t.equal(deployed.code, 0, deployed.stderr);
  t.equal((await islet(['invoke', 'py_pack'], { env })).stdout, '["function.py", "pkg", "service.yml", "__init__.py"]\n');

  writeFileSync(
    path.join(dir, 'function.py'),
    'from zoneinfo import ZoneInfo\n\n\ndef lookup(key):\n    return ZoneInfo(key)\n\nPARIS = lookup("Europe/Pariss")\n\ndef handler(body, req):\n    return 1\n',
  );
  const failed = await islet(['deploy', 'py_pack', '--dir', dir], { env });
  t.equal(failed.code, 1);
  const [first, ...rest] = failed.stderr.split('\n');
  t.equal(first, `islet: ${path.join(dir, 'function.py')}:5: functions.py_pack: ZoneInfoNotFoundError: 'No time zone found with key Europe/Pariss' (function.py, line 5)`);
  t.match(rest.join('\n'), /File "\/function\/function\.py", line 7, in <module>\n.*\n  File "\/function\/function\.py", line 5, in lookup/, "the traceback of the function's frames");
  t.notMatch(failed.stderr, /service\.yml/, 'not blamed on service.yml');
  t.equal((await islet(['invoke', 'py_pack'], { env })).code, 0, 'the previous version still serves');
});
