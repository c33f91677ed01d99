/**
 * How an error's stack is shown under its message (the CLI's logs and invoke, the console): import
 * free, so the console's browser build can use it too.
 */

/**
 * The lines of `stack` that say more than `message`: a JavaScript stack starts with the error's
 * name and message, a Python traceback ends with them, and shown under the message either would
 * repeat it.
 */
export function stackBelow(message: string, stack: string): string {
  const lines = stack.replace(/\n+$/, '').split('\n');
  // A plain Error's message has no name (islet leaves `Error: ` off, as Node's own messages do).
  const repeats = (line: string | undefined) => line !== undefined && line.trim() !== '' && (message.startsWith(line.trim()) || message.startsWith(line.trim().replace(/^Error: /, '')));
  if (repeats(lines[0])) lines.shift();
  else if (repeats(lines[lines.length - 1])) lines.pop();
  return lines.join('\n');
}
