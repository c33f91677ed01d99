/**
 * The shapes the management API answers, as plain types with no imports, so that the CLI, the
 * console (built for the browser) and the routes share one definition.
 */

/** `admin` may do everything in its account; `invoke` may only call secured functions. */
export type KeyScope = 'admin' | 'invoke';

/** A key as listings show it: never the key, nor its digest. */
export interface KeyDescription {
  id: string;
  name: string;
  scope: KeyScope;
  createdAt: string;
  /** null until the key is first used. */
  lastUsedAt: string | null;
  revokedAt?: string;
}

/** One point of a series: a slot's calls, errors and estimated percentiles. */
export interface HistoryPoint {
  /** Start of the slot, ms since the epoch. */
  t: number;
  /** Calls that ran (errors included). */
  calls: number;
  errors: number;
  /** Calls refused before they ran (413, 429, 503). */
  refused: number;
  p50Ms: number | null;
  p99Ms: number | null;
}

export interface HistoryWindow {
  windowSec: number;
  /** The slot length of `series`, seconds. */
  stepSec: number;
  calls: number;
  errors: number;
  refused: number;
  /** Calls per second over the window (or over the time since the server started, if shorter). */
  ratePerSec: number;
  errorRate: number;
  p50Ms: number | null;
  p99Ms: number | null;
  series: HistoryPoint[];
}

/** `GET /v2/accounts/<a>/functions/<name>/stats`: a window's figures, and what is happening now. */
export interface FunctionStatsAnswer extends HistoryWindow {
  name: string;
  inFlight: number;
  coldStarts: number;
  warmInstances: number;
  warmMemoryBytes: number;
}

/** What the console sends to its port's POST /console/invoke to call a function: the request, as data. */
export interface ConsoleCall {
  account: string;
  function: string;
  method: string;
  /** After the function's name (`/items/7`), as on the wire: percent-encoded, no query. */
  path: string;
  /** Without the `?`. */
  query: string;
  headers: Record<string, string>;
  /** The request body, base64. */
  body: string;
}

/** The function's answer, as the console gets it: data in a JSON document, never a response of its own. */
export interface ConsoleAnswer {
  status: number;
  statusText: string;
  /** Every header the function port would send, in its order (Content-Length included). */
  headers: [string, string][];
  /** The body, base64 (empty for HEAD, as on the wire). */
  body: string;
}
