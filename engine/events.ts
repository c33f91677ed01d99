import { channel } from 'node:diagnostics_channel';
import { isServiceError, type ErrorCode } from './errors';
import type { FunctionManifest } from './manifest';
import type { CallObserver } from './observer';

/**
 * The engine's `diagnostics_channel` events, where tracing and metrics of one's own hook in
 * (`diagnostics_channel.subscribe('islet:call:end', (event) => …)` in a process that runs an
 * engine: a worker, or a program that embeds one). Nothing is made when nobody subscribes: each
 * publish is behind `hasSubscribers`.
 */
export const CALL_END = channel('islet:call:end');
export const DEPLOY = channel('islet:deploy');

/** `islet:call:end`: a call ran (or failed once admitted), as its log line and metrics see it. */
export interface CallEndEvent {
  account: string;
  function: string;
  version: number;
  requestId: string;
  method: string;
  status: number;
  /** The error's code, when the call failed. */
  errorCode: ErrorCode | undefined;
  /** Microseconds in the handler (X-Service-Duration-Usecs). */
  handlerUs: number;
  /** Microseconds from admission to the answer (a cold start and a wait in a queue included). */
  totalUs: number;
  /** A streamed answer's: microseconds from the handler's start to its first byte (absent: none came, or the answer was not streamed). */
  firstByteUs?: number;
  /** A streamed answer's: microseconds from the handler's start to its end (absent: the answer was not streamed). */
  streamEndUs?: number;
}

/** `islet:deploy`: a deploy ended, with the version it stored or the error that refused it. */
export interface DeployEvent {
  account: string;
  function: string | undefined;
  /** The stored version (none when the deploy failed). */
  version: number | undefined;
  runtime: string | undefined;
  /** Unpacked bytes of the code. */
  bytes: number | undefined;
  errorCode: ErrorCode | undefined;
  /** Milliseconds from the deploy's start (its upload received) to its end. */
  durationMs: number;
}

/** Publishes `islet:call:end` for every call that ends (refusals before a call runs are not calls). */
export function channelObserver(): CallObserver {
  return {
    callEnded(_stats, manifest, requestId, method, status, error, handlerUs, totalUs, streamed) {
      if (!CALL_END.hasSubscribers) return;
      const event: CallEndEvent = { account: manifest.account, function: manifest.name, version: manifest.version, requestId, method, status, errorCode: error?.code, handlerUs, totalUs };
      if (streamed) {
        if (streamed.firstByteUs !== undefined) event.firstByteUs = streamed.firstByteUs;
        event.streamEndUs = streamed.endUs;
      }
      CALL_END.publish(event);
    },
    callRefused() {},
  };
}

/** Publishes `islet:deploy` for a deploy that stored `manifest`, or failed with `error` (the spec's name, if it had one). */
export function publishDeploy(account: string, startedMs: number, outcome: { manifest: FunctionManifest } | { error: unknown; spec: unknown }): void {
  if (!DEPLOY.hasSubscribers) return;
  const manifest = 'manifest' in outcome ? outcome.manifest : undefined;
  const named = 'spec' in outcome ? (outcome.spec as { name?: unknown } | null)?.name : undefined;
  DEPLOY.publish({
    account,
    function: manifest?.name ?? (typeof named === 'string' ? named : undefined),
    version: manifest?.version,
    runtime: manifest?.runtime,
    bytes: manifest?.bytes,
    errorCode: 'error' in outcome ? (isServiceError(outcome.error) ? outcome.error.code : 'ERR_INTERNAL') : undefined,
    durationMs: performance.now() - startedMs,
  } satisfies DeployEvent);
}
