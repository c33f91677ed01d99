/** Server-wide limits (SPEC §6). Server flags override them; `timeout`/`memory` also per function. */
export interface Limits {
  /** Largest request body, bytes. */
  requestBodyBytes: number;
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
  /** Warm instances kept at most (count). */
  maxWarmInstances: number;
  /** Warm instances kept at most (estimated memory, MB). */
  maxWarmMemoryMb: number;
  /**
   * Keep one Python interpreter booted ahead for the next cold start (about 90 MB once a Python
   * function has been loaded; cold starts otherwise boot one, about 300 ms).
   */
  pythonSpare: boolean;
}

const MiB = 1024 * 1024;

export const DEFAULT_LIMITS: Limits = {
  requestBodyBytes: 6 * MiB,
  responseBodyBytes: 6 * MiB,
  timeoutMs: 10_000,
  maxTimeoutMs: 300_000,
  memoryMb: 128,
  maxMemoryMb: 2048,
  bundleBytes: 100 * MiB,
  maxInFlightPerFunction: 256,
  maxWarmInstances: 2000,
  maxWarmMemoryMb: 4096,
  pythonSpare: true,
};
