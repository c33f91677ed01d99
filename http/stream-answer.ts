import type { HttpResponse } from '@trufflesuite/uws-js-unofficial';
import type { BodyStream } from '../engine/body-stream';
import type { ResponseState } from './respond';

/**
 * Writes a body the function streams, after the status and headers (inside their cork): each chunk
 * as it comes (HTTP/1.1 chunked, no Content-Length), the next one asked for only once the socket
 * has taken the last, so a slow client holds the function's stream back instead of the server
 * buffering it. A client that goes away cancels the stream; a stream that fails (its error, the
 * call's timeout) closes the connection mid-body, so the client sees the answer cut, not ended.
 * `done` is called once, however it ends.
 */
export function writeStream(res: HttpResponse, state: ResponseState, stream: BodyStream, head: boolean, done: () => void): void {
  if (head) {
    stream.cancel('a HEAD request takes no body');
    res.endWithoutBody(undefined, state.connections.closing);
    done();
    return;
  }
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    done();
  };
  state.onAbort = () => {
    stream.cancel('the client closed the connection');
    finish();
  };
  const pump = (): void => {
    stream.read().then(
      (chunk) => {
        if (state.aborted) return;
        if (chunk === null) {
          res.cork(() => res.end(undefined, state.connections.closing));
          finish();
          return;
        }
        let ok = true;
        state.onWrite?.('write');
        res.cork(() => {
          ok = res.write(chunk);
        });
        // uWS sent the chunk or copied what the socket did not take.
        stream.release?.(chunk);
        if (ok) {
          state.onWrite?.('flowing');
          pump();
        } else {
          state.onWrite?.('blocked');
          res.onWritable(() => {
            state.onWrite?.('flowing');
            if (!state.aborted) pump();
            return true;
          });
        }
      },
      () => {
        // The log line of the call says why (the engine's observer); the client sees the body cut.
        // Closed on the next turn: uWS calls onAborted from close(), and a native call back into
        // JavaScript from within a promise job aborts Node (InternalCallbackScope::Close).
        finish();
        setImmediate(() => {
          if (!state.aborted) res.close();
        });
      },
    );
  };
  pump();
}
