import { EventSourceParserStream } from 'eventsource-parser/stream';
import { ApiError, functionPath, readAnswer, type LogEntry, type Session } from './api';

export type LiveState = { kind: 'connecting' } | { kind: 'live' } | { kind: 'retrying'; reason: string } | { kind: 'ended'; reason: string };

export interface LiveHandlers {
  onEntries(entries: LogEntry[]): void;
  /** Lines left out: a count, or null when lines were written faster than the server could follow them. */
  onDropped(count: number | null): void;
  onState(state: LiveState): void;
}

const BACKLOG = 200;
const RETRY_MS = [1_000, 2_000, 5_000, 10_000];

/**
 * Follows a function's logs over Server-Sent Events. The stream is read with fetch, which can send
 * the key in its header (EventSource cannot). A dropped connection is opened again from the last
 * line seen; a refused key or a removed function ends it. Answers a function that stops following.
 */
export function followLogs(session: Session, name: string, handlers: LiveHandlers): () => void {
  const abort = new AbortController();
  let lastT: number | undefined;
  /** Lines seen at `lastT`, which a reconnection sends again. */
  let seenAtLast = new Set<string>();
  let attempt = 0;

  const accept = (entry: LogEntry): boolean => {
    const id = `${entry.requestId}|${entry.level}|${entry.message}`;
    if (lastT !== undefined && entry.t < lastT) return false;
    if (entry.t === lastT && seenAtLast.has(id)) return false;
    if (entry.t !== lastT) seenAtLast = new Set();
    lastT = entry.t;
    seenAtLast.add(id);
    return true;
  };

  const connect = async (): Promise<void> => {
    handlers.onState({ kind: 'connecting' });
    const query = lastT === undefined ? `?backlog=${BACKLOG}` : `?backlog=${BACKLOG}&since=${lastT}`;
    const response = await fetch(functionPath(session, name, `/logs/live${query}`), {
      headers: { 'X-Service-Api-Key': session.key, accept: 'text/event-stream' },
      cache: 'no-store',
      signal: abort.signal,
    });
    if (!response.ok || !response.body) await readAnswer(response);
    attempt = 0;
    handlers.onState({ kind: 'live' });
    const events = response.body!.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
    const reader = events.getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error('the server closed the stream');
      // The server sends what it has in one write: the lines of one read arrive together.
      if (value.event === 'log') {
        const entry = JSON.parse(value.data) as LogEntry;
        if (accept(entry)) handlers.onEntries([entry]);
      } else if (value.event === 'dropped') {
        handlers.onDropped((JSON.parse(value.data) as { count: number | null }).count);
      } else if (value.event === 'end') {
        const end = JSON.parse(value.data) as { errorCode: string; message: string };
        throw new ApiError(403, end.errorCode, end.message);
      }
    }
  };

  const run = async (): Promise<void> => {
    while (!abort.signal.aborted) {
      try {
        await connect();
      } catch (err) {
        if (abort.signal.aborted) return;
        const reason = (err as Error).message;
        // A refused key or a missing function will not get better by asking again.
        if (err instanceof ApiError && [400, 401, 403, 404].includes(err.status)) {
          handlers.onState({ kind: 'ended', reason });
          return;
        }
        handlers.onState({ kind: 'retrying', reason });
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS[Math.min(attempt++, RETRY_MS.length - 1)]));
      }
    }
  };
  void run();
  return () => abort.abort();
}
