import { ServiceError } from '../errors';
import { ISLET_FRAME } from '../sandbox/protocol';

export type DeathCause = 'memory' | 'timeout' | 'disposed';

/**
 * Whether an entry failed because a promise was rejected with no handler by its end, which
 * isolated-vm throws in place of the entry's answer: the sandbox catches everything else its
 * entries run but the timeout and the memory limit (asked only of an isolate still alive).
 */
export function isRejection(err: unknown): boolean {
  const message = err instanceof Error ? err.message : String(err);
  return !/Script execution timed out|disposed/i.test(message);
}

/**
 * The log line of a promise rejected with no handler (an Express 4 route's async rejection, a
 * floating promise), as Node logs it (with --unhandled-rejections=warn) and a Worker does: the
 * user's frames only.
 */
export function uncaughtLine(err: unknown, mapStack: ((stack: string) => string) | undefined): string {
  const text = err instanceof Error ? (err.stack ?? `${err.name}: ${err.message}`) : String(err);
  const frames = (mapStack?.(text) ?? text)
    .split('\n')
    .filter((line) => !ISLET_FRAME.test(line) && !line.includes('isolated-vm boundary'))
    .join('\n');
  return `Uncaught (in promise) ${frames}`;
}

/** What the calls of a dead instance answer. */
export function deathError(cause: DeathCause | undefined): ServiceError {
  if (cause === 'memory') return new ServiceError('ERR_RESOURCE_LIMIT', 'the function instance went over its memory limit and was discarded');
  if (cause === 'timeout') return new ServiceError('ERR_TIMEOUT', 'the function instance was stopped because a call on it ran past its timeout');
  return new ServiceError('ERR_INTERNAL', 'the function instance was stopped');
}

/** The answer of a call stopped at its timeout. */
export function timeoutError(timeoutMs: number): ServiceError {
  return new ServiceError('ERR_TIMEOUT', `the function ran longer than its timeout of ${timeoutMs} ms and was stopped`);
}
