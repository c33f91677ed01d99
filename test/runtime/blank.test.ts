import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import ivm from 'isolated-vm';
import t from 'tap';
import { createBlankIsolate } from '../../engine/node8/blank';
import { RUNTIME_FILENAME } from '../../engine/sandbox/protocol';

// The node8 runtime's code cache is made after islet's own warm-up calls, so new isolates do not
// compile the call path again on their first call (a cold start's cost).

const source = readFileSync(path.join(__dirname, '..', '..', 'engine', 'node8', 'sandbox.js'), 'utf8');

t.test('the runtime cache holds the call path, not only the top level', async (t) => {
  const sandbox: { source: string; cache?: ivm.ExternalCopy<ArrayBuffer> } = { source };
  const blank = createBlankIsolate(128, sandbox);
  blank.isolate.dispose();
  const warmed = sandbox.cache?.copy().byteLength ?? 0;

  const plainIsolate = new ivm.Isolate({ memoryLimit: 128 });
  const plain = (plainIsolate.compileScriptSync(source, { filename: RUNTIME_FILENAME, produceCachedData: true }) as ivm.Script & ivm.CachedDataResult).cachedData;
  const plainBytes = plain?.copy().byteLength ?? 0;
  plainIsolate.dispose();

  t.ok(plainBytes > 0, `a plain compile caches the top level (${plainBytes} bytes)`);
  t.ok(warmed > plainBytes * 3, `the warmed cache (${warmed} bytes) holds far more than the top level (${plainBytes} bytes)`);
});

t.test('isolates made from the warmed cache accept it and start blank', async (t) => {
  const sandbox: { source: string; cache?: ivm.ExternalCopy<ArrayBuffer> } = { source };
  createBlankIsolate(128, sandbox).isolate.dispose();
  const probe = new ivm.Isolate({ memoryLimit: 128 });
  const script = probe.compileScriptSync(source, { filename: RUNTIME_FILENAME, cachedData: sandbox.cache! }) as ivm.Script & { cachedDataRejected?: boolean };
  t.equal(script.cachedDataRejected, false, 'V8 accepts the cache');
  probe.dispose();
  const blank = createBlankIsolate(128, sandbox);
  t.equal(blank.bridge.target, undefined, 'no function is attached yet');
  t.equal(blank.context.evalSync('typeof __islet + typeof __isletHost'), 'undefinedundefined', 'the runtime globals are gone');
  blank.isolate.dispose();
});
