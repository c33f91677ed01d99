/**
 * An error the CLI reports as one line on stderr, exiting non-zero; `detail` (a traceback of the
 * user's code) follows that line when there is one.
 */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
    readonly detail?: string,
  ) {
    super(message);
    this.name = 'CliError';
  }
}
