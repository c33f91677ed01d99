/**
 * The operation between console's guest half (guest/console.ts; the Python runtime's print and
 * logging) and its host half (host.ts): a log line, fire and forget. Bundled into the runtimes:
 * no imports.
 */

/** Characters of one log line; longer ones are cut (by the sandbox, and again by the host). */
export const MAX_LOG_LINE = 16 * 1024;

export interface ConsoleCallbacks {
  /** Appends a line to the function's logs (fire and forget). */
  log(requestId: string, level: string, text: string): void;
}
