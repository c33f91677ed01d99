import { LOG_BUDGET, type ConsoleCallbacks } from '../ops';

/**
 * The host's `log` callback behind this instance's log budget (LOG_BUDGET characters a second, and
 * four seconds' worth at once). Each line handed over is copied out of the isolate by the server's
 * own thread, so a function logging without pause took that thread from every other; lines past
 * the budget stay here, and the next line that fits says how many were dropped. Made when the
 * runtime starts: `Date.now` is taken before user code could replace it, and nothing here calls
 * a built-in user code can change.
 */
export function budgetedLog(log: ConsoleCallbacks['log']): ConsoleCallbacks['log'] {
  const now = Date.now;
  const burst = 4 * LOG_BUDGET;
  let tokens = burst;
  let at = now();
  let dropped = 0;
  return (requestId, level, text) => {
    const t = now();
    const refilled = tokens + ((t - at) / 1000) * LOG_BUDGET;
    tokens = refilled > burst ? burst : refilled;
    at = t;
    if (tokens < text.length) {
      dropped++;
      return;
    }
    tokens -= text.length;
    if (dropped > 0) {
      log(requestId, 'warn', `${dropped} log line${dropped === 1 ? '' : 's'} dropped: over the log budget of ${LOG_BUDGET} characters a second`);
      dropped = 0;
    }
    log(requestId, level, text);
  };
}
