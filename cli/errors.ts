/** An error the CLI reports as one line on stderr, exiting non-zero. */
export class CliError extends Error {
  constructor(message: string, readonly exitCode = 1) {
    super(message);
    this.name = 'CliError';
  }
}
