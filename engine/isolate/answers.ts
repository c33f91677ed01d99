import { ServiceError } from '../errors';
import type { EgressBodies } from '../capabilities/fetch/bodies';
import type { RequestBodies } from '../capabilities/request-body/host';
import type { InstanceStreams } from '../capabilities/streams/host';
import { RelayFrom } from '../capabilities/streams/ops';
import type { RelaySource } from '../capabilities/streams/relay';
import type { FunctionSocket } from '../capabilities/websockets/host';
import type { CallOutcome, FunctionResponse } from '../runtime';
import { serverLog } from '../server-log';
import type { CallBatches } from './call-batches';
import { socketOutcome, streamedResponse, wholeOutcome, type RawResult } from './results';

/** What the answers of an instance's calls need of it. */
export interface AnswerHost {
  readonly batches: CallBatches;
  readonly streams: InstanceStreams;
  readonly requestBodies: RequestBodies;
  readonly egressBodies: EgressBodies;
  readonly responseBodyBytes: number;
  mapStack?(stack: string): string;
  /** The client end of WebSocket pair `key`, which the sandbox accepted (see InstanceSockets.give). */
  give(key: number): FunctionSocket | undefined;
  /** The answer was over a resource limit: the instance takes no more calls. */
  retire(): void;
  /** A call is over: one fewer in flight. */
  left(): void;
  /** A retired instance is disposed once its calls are over (see IsolateInstance.disposeIfDone). */
  disposeIfDone(): void;
  /** The call of `meta` is over: its request's sockets close unless it still runs. */
  ownerOver(meta: string): void;
}

/**
 * The answers of an instance's calls: each running call is answered once, with a whole answer,
 * the head of one whose body streams (the call runs on until its stream ends), a WebSocket given,
 * or its failure; its request body still arriving is forgotten with it.
 */
export class CallAnswers {
  /** Made once: the hot path of a whole answer allocates no closure of its own for it. */
  private readonly retire = (): void => this.host.retire();

  constructor(private readonly host: AnswerHost) {}

  /** A call's result: its answer, the head of an answer whose body streams, or a WebSocket given. */
  answer(id: number, result: RawResult): void {
    if (typeof result === 'object' && result !== null && result.t === 's') this.startStream(id, result);
    else if (typeof result === 'object' && result !== null && result.t === 'w') this.finish(id, () => socketOutcome(result, (key) => this.host.give(key)));
    else this.finish(id, () => wholeOutcome(result, this.host.responseBodyBytes, this.host.mapStack, this.retire));
  }

  /** Answers a running call once (later answers for the same id are ignored). */
  finish(id: number, outcome: () => CallOutcome): void {
    const streaming = this.host.batches.running.get(id);
    if (streaming?.streaming) {
      // Answered already: its stream fails (the call's timeout, the instance's death), which ends the call.
      const result = outcome();
      this.host.streams.fail(id, result.ok ? new ServiceError('ERR_INTERNAL', 'the call ended while its answer streamed') : result.error);
      return;
    }
    const call = this.host.batches.take(id);
    if (!call) return;
    if (call.bodyId !== undefined) this.host.requestBodies.forget(call.bodyId);
    this.settle(call.done, outcome());
    this.host.ownerOver(call.meta);
  }

  settle(done: (outcome: CallOutcome) => void, outcome: CallOutcome): void {
    this.host.left();
    try {
      done(outcome);
    } catch (err) {
      // A failure while answering one call must not leave the rest of its batch unanswered.
      serverLog.error({ code: 'ERR_INTERNAL', err }, `internal error while answering a call: ${(err as Error)?.message ?? String(err)}`);
    }
    this.host.disposeIfDone();
  }

  /** The stream of call `id` ended (or failed): the call is over. */
  streamEnded(id: number): void {
    const call = this.host.batches.take(id);
    if (!call) return;
    if (call.bodyId !== undefined) this.host.requestBodies.forget(call.bodyId);
    this.host.left();
    this.host.ownerOver(call.meta);
    this.host.disposeIfDone();
  }

  /**
   * Answers call `id` with the status and headers of `head` and a body pulled from the sandbox's
   * stream; the call runs on (its timeout, the instance awake) until the stream ends.
   */
  private startStream(id: number, head: { s?: unknown; h?: unknown; k?: unknown; r?: unknown }): void {
    const call = this.host.batches.running.get(id);
    if (!call || call.streaming) return;
    let response: FunctionResponse;
    try {
      response = streamedResponse(head, (key) => (head.r === undefined ? this.host.streams.start(key, id) : this.host.streams.relay(key, id, this.relaySource(head.r))));
    } catch (err) {
      const error = err instanceof ServiceError ? err : new ServiceError('ERR_BAD_RESPONSE', (err as Error).message);
      this.finish(id, () => ({ ok: false, error }));
      return;
    }
    call.streaming = true;
    try {
      call.done({ ok: true, response });
    } catch (err) {
      serverLog.error({ code: 'ERR_INTERNAL', err }, `internal error while answering a call: ${(err as Error)?.message ?? String(err)}`);
    }
  }

  /** The body a relayed answer passes on: `[RelayFrom.request, id]` a request body, `[RelayFrom.fetch, id]` a fetch's. */
  private relaySource(from: unknown): RelaySource {
    const [kind, id] = Array.isArray(from) ? from : [];
    if (kind === RelayFrom.request && typeof id === 'number') return this.host.requestBodies.take(id);
    if (kind === RelayFrom.fetch && typeof id === 'number') return this.host.egressBodies.take(id);
    throw new ServiceError('ERR_BAD_RESPONSE', 'the answer relays a body this instance does not hold');
  }
}
