import { availableParallelism } from 'node:os';
import { SOCKET_LIMITS, type SocketLimits } from './capabilities/sockets/limits';
import { WEBSOCKET_LIMITS, type WebSocketLimits } from './capabilities/websockets/limits';

/** Server-wide limits (SPEC §6). Server flags override them; `timeout`/`memory` also per function. */
export interface Limits {
  /**
   * Largest request body read whole, bytes: a body the server buffers before the call, and what
   * request.json()/text()/arrayBuffer(), a seed handler's body and Python's req.body take.
   */
  requestBodyBytes: number;
  /** Largest request body a node8 function reads as a stream (`request.body`, a server app's `req`), bytes. */
  streamedRequestBodyBytes: number;
  /** Largest response body, bytes. */
  responseBodyBytes: number;
  /** Default handler wall-clock timeout, ms. */
  timeoutMs: number;
  /** Upper bound a function may ask for in its `timeout`, ms. */
  maxTimeoutMs: number;
  /** Default memory per instance, MB. */
  memoryMb: number;
  /** Upper bound a function may ask for in its `memory`, MB. */
  maxMemoryMb: number;
  /** Largest deploy bundle, bytes. */
  bundleBytes: number;
  /** Calls of one function running at once before new ones get ERR_OVERLOADED. */
  maxInFlightPerFunction: number;
  /** Calls of one account's functions running at once before new ones get ERR_RATE_LIMITED (an account's own limits override it). */
  accountMaxInFlight: number;
  /** Calls per second of one account over time, a token bucket's refill (0: no bound). */
  accountRatePerSec: number;
  /** Calls the bucket holds for a burst (0: one second's worth of the rate). */
  accountBurst: number;
  /** Functions one account may have (an account's own limits override it). */
  accountMaxFunctions: number;
  /**
   * Bytes of code one account may keep: the unpacked files of every kept version of all its
   * functions (an account's own limits override it).
   */
  accountMaxCodeBytes: number;
  /**
   * Bytes of log files one account may keep on one node, all its functions and workers together;
   * past it the account's oldest log files are deleted (an account's own limits override it).
   */
  accountMaxLogBytes: number;
  /**
   * An ERR_RATE_LIMITED refusal is answered after this long (ms), so that a client sending again
   * at once cannot take the HTTP thread from other accounts (0: at once).
   */
  refusalHoldMs: number;
  /**
   * The share of every account's limits this process holds (1 alone; each of N workers holds
   * 1/N, since each counts only the calls it serves).
   */
  accountShare: number;
  /** Function versions kept warm at most (count). */
  maxWarmInstances: number;
  /**
   * Instances of one function version at most: a version whose calls keep every instance busy
   * running code gets another, up to this (default: the number of cores; 1 turns it off).
   */
  maxInstancesPerVersion: number;
  /** An extra instance of a version that stays idle this long (ms) is retired. */
  instanceIdleMs: number;
  /** Warm instances kept at most (estimated memory, MB). */
  maxWarmMemoryMb: number;
  /**
   * Keep one Python interpreter booted ahead for the next cold start (about 60 MB once a Python
   * function has been loaded; cold starts otherwise boot one, about 300 ms).
   */
  pythonSpare: boolean;
  /**
   * Threads of this process for functions' host work (crypto, compression, key derivation), apart
   * from libuv's pool; each account may hold half of them at once (engine/host-work/pool.ts).
   */
  hostWorkThreads: number;
  /**
   * Characters of log text each account's functions may hand this process per second (four
   * seconds' worth at once); past it their lines are dropped and counted (engine/capabilities/console/log-budget.ts).
   */
  accountLogCharsPerSec: number;
  /** Response bytes each account's fetches may read per second in this process (as much at once); past it they read more slowly (engine/capabilities/fetch/egress.ts). */
  accountEgressBytesPerSec: number;
  /** Asynchronous invocations one account may have queued or running, all nodes together (ERR_QUOTA_EXCEEDED past it). */
  asyncMaxQueued: number;
  /** Asynchronous invocations this process runs at once; one account holds half of them at most (engine/jobs/runner.ts). */
  asyncConcurrency: number;
  /** A finished asynchronous invocation's record (its result) is kept this long, ms. */
  asyncKeepMs: number;
  /** The bounds of functions' WebSockets (engine/capabilities/websockets/limits.ts). */
  webSockets: WebSocketLimits;
  /** The bounds of functions' TCP sockets (engine/capabilities/sockets/limits.ts). */
  sockets: SocketLimits;
}

const MiB = 1024 * 1024;

export const DEFAULT_LIMITS: Limits = {
  requestBodyBytes: 6 * MiB,
  streamedRequestBodyBytes: 100 * MiB,
  responseBodyBytes: 6 * MiB,
  timeoutMs: 10_000,
  maxTimeoutMs: 300_000,
  memoryMb: 128,
  maxMemoryMb: 2048,
  bundleBytes: 100 * MiB,
  maxInFlightPerFunction: 256,
  // As Lambda's default account concurrency; no rate bound unless the operator sets one.
  accountMaxInFlight: 1000,
  accountRatePerSec: 0,
  accountBurst: 0,
  // Cloudflare's paid plan allows 500 Workers per account; a self-hosted server's operator sets its own.
  accountMaxFunctions: 1000,
  // Ten kept versions of a 100 MB function, or forty of a 25 MB one.
  accountMaxCodeBytes: 1024 * MiB,
  // 32 functions' full logs (each keeps about 2 MB: a 1 MB file and the one rotated before it).
  accountMaxLogBytes: 64 * MiB,
  refusalHoldMs: 100,
  accountShare: 1,
  maxWarmInstances: 2000,
  maxInstancesPerVersion: availableParallelism(),
  instanceIdleMs: 10_000,
  maxWarmMemoryMb: 4096,
  pythonSpare: true,
  hostWorkThreads: 2,
  accountLogCharsPerSec: 1024 * 1024,
  accountEgressBytesPerSec: 16 * MiB,
  asyncMaxQueued: 10_000,
  asyncConcurrency: 32,
  // As OpenWhisk keeps activation records a day by default.
  asyncKeepMs: 24 * 3_600_000,
  webSockets: WEBSOCKET_LIMITS,
  sockets: SOCKET_LIMITS,
};
