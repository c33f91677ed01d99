import type { InstanceServices } from '../../runtime';
import { MAX_LOG_LINE } from './ops';

/**
 * console's host half: a line of the function's logs, its request id, level and text held to
 * their sizes here, on the host: the sandboxes cut their lines too, but a guest's own code is not
 * a bound.
 */
export function appendLog(services: InstanceServices, requestId: unknown, level: unknown, text: unknown): void {
  services.log(String(requestId).slice(0, 64), String(level).slice(0, 8), cutLine(String(text)));
}

/** A log line cut to MAX_LOG_LINE characters. */
export function cutLine(text: string): string {
  return text.length > MAX_LOG_LINE ? `${text.slice(0, MAX_LOG_LINE)}… [${text.length - MAX_LOG_LINE} more characters]` : text;
}
