import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import t from 'tap';
import type { CallEndEvent, DeployEvent } from '../../engine/events';
import { fixture, startTestServer } from '../helpers/server';

// The engine's diagnostics_channel events (README: "Events for tracing and metrics"): a subscriber
// sees every deploy, stored or refused, and every call's end, with what tracing and metrics need.

t.test('islet:deploy and islet:call:end reach a subscriber', async (t) => {
  const s = await startTestServer();
  t.teardown(() => s.stop());
  const deploys: DeployEvent[] = [];
  const calls: CallEndEvent[] = [];
  const onDeploy = (event: unknown) => void deploys.push(event as DeployEvent);
  const onCall = (event: unknown) => void calls.push(event as CallEndEvent);
  subscribe('islet:deploy', onDeploy);
  subscribe('islet:call:end', onCall);
  t.teardown(() => {
    unsubscribe('islet:deploy', onDeploy);
    unsubscribe('islet:call:end', onCall);
  });

  await s.deploy('ok', fixture('probes-node8'), 'ok');
  await t.rejects(s.engine.deploy(s.accountId, { name: 'nope', runtime: 'cobol', file: 'function.js', entrypoint: 'ok', env: {} }, { dir: fixture('probes-node8') }), { code: 'ERR_INVALID_FUNCTION' });
  t.match(deploys, [
    { account: s.accountId, function: 'ok', version: 1, runtime: 'node8', errorCode: undefined },
    { account: s.accountId, function: 'nope', version: undefined, errorCode: 'ERR_INVALID_FUNCTION' },
  ]);
  t.equal(deploys.length, 2);
  t.ok(deploys[0]!.bytes! > 0 && deploys[0]!.durationMs >= 0, 'its size and how long it took');

  const res = await s.call('ok', { method: 'POST', body: '{}' });
  t.equal(res.status, 200);
  const requestId = res.headers.get('x-service-request-id');
  const thrown = await s.call('nothing-here');
  t.equal(thrown.status, 404);
  t.match(
    calls,
    [{ account: s.accountId, function: 'ok', version: 1, requestId, method: 'POST', status: 200, errorCode: undefined }],
    'one event per call that ran; a refusal before it ran is not a call',
  );
  t.equal(calls.length, 1);
  t.ok(calls[0]!.totalUs >= calls[0]!.handlerUs && calls[0]!.handlerUs > 0, 'the handler time within the whole time');
});
