import type { HttpResponse } from '@trufflesuite/uws-js-unofficial';
import t from 'tap';
import { UwsRequestBody } from '../../http/request-body';

// A relayed body's chunks are copied out of uWS's memory (which uWS reuses) into memory of the
// body's own; the memory of a chunk the relay wrote out holds a later chunk. These check that the
// bytes stay right while memory is reused, with a stand-in for uWS that overwrites its chunk's
// memory after each callback as uWS does.
const KiB = 1024;

function fakeUws(): { res: HttpResponse; send(bytes: Uint8Array, last: boolean): void } {
  let onData: ((chunk: ArrayBuffer, last: boolean) => void) | undefined;
  const res = { onData: (handler: typeof onData) => void (onData = handler), pause: () => undefined, resume: () => undefined } as unknown as HttpResponse;
  return {
    res,
    send(bytes, last) {
      const chunk = new Uint8Array(bytes).buffer;
      onData!(chunk, last);
      new Uint8Array(chunk).fill(0xee);
    },
  };
}

const pattern = (seed: number, size: number) => Uint8Array.from({ length: size }, (_, i) => (seed * 31 + i) & 0xff);

t.test('a relay that writes each chunk out gets every byte right, in memory used again', async (t) => {
  const uws = fakeUws();
  const body = new UwsRequestBody(uws.res, undefined, 1 << 30);
  const memories = new Set<ArrayBufferLike>();
  let reused = 0;
  for (let i = 0; i < 8; i++) {
    // Sizes up and down, as uWS's reads are.
    const sent = pattern(i, 256 * KiB - (i % 3) * 10 * KiB);
    uws.send(sent, i === 7);
    const chunk = (await body.next(1024 * KiB))!;
    t.same(Buffer.from(chunk), Buffer.from(sent), `chunk ${i}`);
    if (memories.has(chunk.buffer)) reused++;
    memories.add(chunk.buffer);
    body.release(chunk);
  }
  t.equal(await body.next(1024 * KiB), undefined, 'the end');
  t.ok(reused >= 6, `later chunks went into the memory of chunks written out (${reused} of 8)`);
});

t.test('memory a released chunk shares with bytes still queued is not used again', async (t) => {
  const uws = fakeUws();
  const body = new UwsRequestBody(uws.res, undefined, 1 << 30);
  const first = pattern(1, 400 * KiB);
  uws.send(first, false);
  // Read in pieces: the first piece's memory also holds the rest of the chunk, still queued.
  const piece = (await body.next(100 * KiB))!;
  body.release(piece);
  const second = pattern(2, 200 * KiB);
  uws.send(second, true);
  const rest: Uint8Array[] = [];
  for (let chunk = await body.next(1024 * KiB); chunk !== undefined; chunk = await body.next(1024 * KiB)) rest.push(Buffer.from(chunk));
  t.same(Buffer.concat([Buffer.from(piece), ...rest]), Buffer.concat([Buffer.from(first), Buffer.from(second)]), 'every byte as sent');
});

t.test("a read joined from several chunks is not memory of the body's own, and is not used again", async (t) => {
  const uws = fakeUws();
  const body = new UwsRequestBody(uws.res, undefined, 1 << 30);
  // Three small chunks queued, then read at once: joined by Buffer.concat, from Buffer's shared pool.
  for (let i = 0; i < 3; i++) uws.send(pattern(i, 100), false);
  const joined = (await body.next(1024 * KiB))!;
  t.equal(joined.byteLength, 300);
  const before = Buffer.from(joined);
  body.release(joined);
  uws.send(pattern(9, 200), true);
  const next = (await body.next(1024 * KiB))!;
  t.not(next.buffer, joined.buffer, 'the next chunk has memory of its own');
  t.same(Buffer.from(joined), before, 'the memory the joined read shares is untouched');
});
