import type { ServiceError } from './errors';
import type { LogStore } from './logs';
import { keyPerManifest, type FunctionManifest } from './manifest';
import type { FunctionStats } from './stats/function-stats';

/** When a streamed answer's bytes went out, in µs from the handler's start (its end is the call's handler time). */
export interface StreamTimes {
  /** To its first byte (undefined: none came). */
  firstByteUs: number | undefined;
  /** To its end: its last byte, its failure or its client's leaving. */
  endUs: number;
}

/**
 * Where the call path reports to (workerd's RequestObserver): the call's logs and its metrics hook
 * in here, not as an `if` per feature in the engine. Called on every call: implementations must
 * not allocate beyond what they write.
 */
export interface CallObserver {
  /**
   * A call ran (or failed to start): its status, its error if it failed, the microseconds in the
   * handler (X-Service-Duration-Usecs) and from admission to the answer (cold start included);
   * `streamed` only for an answer whose body streamed (nothing is made for the others).
   */
  callEnded(
    stats: FunctionStats,
    manifest: FunctionManifest,
    requestId: string,
    method: string,
    status: number,
    error: ServiceError | undefined,
    handlerUs: number,
    totalUs: number,
    streamed?: StreamTimes,
  ): void;
  /** A call of a known function was refused before it ran (413, 429, 503). */
  callRefused(stats: FunctionStats, error: ServiceError): void;
}

/** Several observers as one. */
export function observers(...list: CallObserver[]): CallObserver {
  if (list.length === 1) return list[0]!;
  return {
    callEnded(stats, manifest, requestId, method, status, error, handlerUs, totalUs, streamed) {
      for (const o of list) o.callEnded(stats, manifest, requestId, method, status, error, handlerUs, totalUs, streamed);
    },
    callRefused(stats, error) {
      for (const o of list) o.callRefused(stats, error);
    },
  };
}

/** `account/name`: a function's log key, made once per manifest object. */
const logKey = keyPerManifest<FunctionManifest>((m) => `${m.account}/${m.name}`);

/**
 * The function's logs: one `call` line per call (method, status, handler time, time from admission
 * to the answer, a streamed answer's first byte and end, error code), and for a failed call an
 * `error` line with its code, message and the user's stack.
 */
export function logObserver(logs: LogStore): CallObserver {
  return {
    callEnded(_stats, manifest, requestId, method, status, error, handlerUs, totalUs, streamed) {
      const key = logKey(manifest);
      // The handler's time and the whole wait: a call whose handler ran 310 ms took 4.8 s with its cold start.
      const message = `${method} ${status} ${(handlerUs / 1000).toFixed(3)} ms handler, ${(totalUs / 1000).toFixed(3)} ms total${streamed ? streamText(streamed) : ''}${error ? ` ${error.code}` : ''}`;
      // The call line, written as JSON directly: it is on every call's path.
      logs.appendLine(key, `{"t":${Date.now()},"requestId":${JSON.stringify(requestId)},"level":"call","version":${manifest.version},"message":${JSON.stringify(message)}}`);
      if (error) {
        const stack = typeof error.details?.stack === 'string' ? error.details.stack : undefined;
        logs.appendLine(key, JSON.stringify({ t: Date.now(), requestId, level: 'error', version: manifest.version, code: error.code, message: error.message, ...(stack ? { stack } : {}) }));
      }
    },
    callRefused() {},
  };
}

/** `, first byte 301.207 ms, end 612.480 ms` (`first byte none` when the stream ended without one). */
function streamText(streamed: StreamTimes): string {
  const first = streamed.firstByteUs === undefined ? 'none' : `${(streamed.firstByteUs / 1000).toFixed(3)} ms`;
  return `, first byte ${first}, end ${(streamed.endUs / 1000).toFixed(3)} ms`;
}

/** The per-function counters behind `/metrics` and `islet stats`. */
export function metricsObserver(): CallObserver {
  return {
    callEnded(stats, _manifest, _requestId, _method, status, error, _handlerUs, totalUs, streamed) {
      stats.record(status, error?.code, totalUs);
      if (streamed) stats.recordStream(streamed.firstByteUs, streamed.endUs);
    },
    callRefused(stats, error) {
      stats.refused(error.status, error.code);
    },
  };
}
