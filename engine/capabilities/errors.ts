/**
 * The one shape of a host operation's failure, for every operation of every capability and both
 * runtimes: data, `{code, message}` (and a web API's error class in `name`), sent as JSON text in
 * place of the answer (see HostReply in engine/sandbox/protocol.ts), never a message to parse.
 * The host makes it of any error with `toHostError`; each runtime turns it into its language's
 * error with one function: `nodeError` (engine/capabilities/guest/native.ts) for Node's modules,
 * whose web APIs make their own classes of it (fetch's TypeError, WebCrypto's DOMException), and
 * Python's `_host_error` (python/sandbox/runtime.py). No imports: the guests read its types.
 */
export interface HostError {
  /** Node's code (ERR_OUT_OF_RANGE, ENOENT…) or islet's (ERR_EGRESS_BLOCKED, ERR_TOO_MUCH_WORK…), when the error has one. */
  code?: string;
  message: string;
  /**
   * The error's class when it is not Node's (whose class follows its code): TypeError, RangeError,
   * or a DOMException's name (OperationError, DataError…) for WebCrypto.
   */
  name?: string;
}

/** A failure a capability's host half throws: its code, and a class for a web API when it needs one. */
export class OpError extends Error {
  constructor(
    readonly code: string | undefined,
    message: string,
    name?: string,
  ) {
    super(message);
    if (name) this.name = name;
  }
}

/**
 * Any error as it crosses to a sandbox: its code when it has one (Node's errors, islet's), else its
 * class when that is not a plain Error. An OpError keeps both.
 */
export function toHostError(err: unknown): HostError {
  if (!(err instanceof Error)) return { message: String(err) };
  const code = (err as { code?: unknown }).code;
  const named = err.name !== 'Error' && (typeof code !== 'string' || err instanceof OpError);
  return { ...(typeof code === 'string' ? { code } : {}), message: err.message, ...(named ? { name: err.name } : {}) };
}

/** `toHostError` as the JSON text a reply carries. */
export function hostErrorText(err: unknown): string {
  return JSON.stringify(toHostError(err));
}
