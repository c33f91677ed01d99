import { fork } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import t from 'tap';
import { errorResponse } from '../../engine/error-answer';
import { ServiceError } from '../../engine/errors';
import { Channel, type Endpoint } from '../../supervisor/channel';
import { ROOT } from '../helpers/server';

// An error of the contract thrown on one side of the supervisor <-> worker IPC keeps its code on
// the other, as a ServiceError: the client gets that code, not ERR_INTERNAL (before, the channel
// carried the message only and the requester made a plain Error of it).

const CHILD = `
const { Channel } = require(${JSON.stringify(path.join(ROOT, 'dist', 'supervisor', 'channel.js'))});
const { ServiceError } = require(${JSON.stringify(path.join(ROOT, 'dist', 'engine', 'errors.js'))});
const channel = new Channel(process);
channel.handle('coded', () => { throw new ServiceError('ERR_QUOTA_EXCEEDED', 'account a1 has 10000 asynchronous invocations queued', { limit: 10000 }); });
channel.handle('plain', async () => { throw new Error('ENOSPC: no space left on device'); });
`;

t.test('a coded error from the other process reaches the client with its code, status and details', async (t) => {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'islet-ipc-')), 'child.js');
  writeFileSync(file, CHILD);
  const child = fork(file, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const channel = new Channel(child as unknown as Endpoint);
  t.teardown(() => child.kill());

  const coded = await channel.request('coded').catch((err: unknown) => err);
  t.ok(coded instanceof ServiceError, 'a ServiceError');
  t.match(coded, { code: 'ERR_QUOTA_EXCEEDED', status: 403, message: 'account a1 has 10000 asynchronous invocations queued', details: { limit: 10000 } });
  const answer = errorResponse(coded, 'req-1', 0);
  t.equal(answer.status, 403);
  t.same(JSON.parse(answer.body as string), { errorCode: 'ERR_QUOTA_EXCEEDED', message: 'account a1 has 10000 asynchronous invocations queued', requestId: 'req-1', limit: 10000 });

  const plain = await channel.request('plain').catch((err: unknown) => err);
  t.notOk(plain instanceof ServiceError, 'any other error stays a plain Error');
  t.equal((plain as Error).message, 'ENOSPC: no space left on device');
  t.equal(errorResponse(plain, 'req-2', 0).status, 500, 'answered as ERR_INTERNAL, its detail in the server log');
});
