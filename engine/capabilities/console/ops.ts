/**
 * The operation between console's guest half (guest/console.ts; the Python runtime's print and
 * logging) and its host half (host.ts): a log line, fire and forget. Bundled into the runtimes:
 * no imports.
 */

/** Characters of one log line; longer ones are cut (by the sandbox, and again by the host). */
export const MAX_LOG_LINE = 16 * 1024;
/**
 * Characters of log text one instance hands the host per second (four seconds' worth at once);
 * the rest is dropped in the sandbox and counted (guest/log-budget.ts). The host holds each
 * account to its own budget too (log-budget.ts).
 */
export const LOG_BUDGET = 1024 * 1024;

export interface ConsoleCallbacks {
  /** Appends a line to the function's logs (fire and forget). */
  log(requestId: string, level: string, text: string): void;
}
