import { readFileSync } from 'node:fs';
import { STATUS_CODES } from 'node:http';
import * as path from 'node:path';
import { stackBelow } from '../../engine/log-text';
import { keyOrigin, requireAccount } from '../config';
import { CliError } from '../errors';

export interface InvokeOptions {
  /** JSON, or `@file` (sent as it is), or `@-` (standard input, as it is). */
  data?: string;
  query?: string | string[];
  method?: string;
  path?: string;
  /** Prints the status line and the headers before the body, as `curl -i` does. */
  include?: boolean;
  env?: NodeJS.ProcessEnv;
  /** What `--data @file` is relative to (the current folder by default). */
  cwd?: string;
  /** Where the answer goes (stdout by default). */
  write?: (chunk: string | Uint8Array) => void;
  /** Standard input, for `--data @-`. */
  stdin?: () => Buffer;
}

export function queryString(pairs: string | string[] | undefined): string {
  const list = pairs === undefined ? [] : Array.isArray(pairs) ? pairs : [pairs];
  const params = new URLSearchParams();
  for (const pair of list) {
    const eq = String(pair).indexOf('=');
    if (eq <= 0) throw new CliError(`--query ${pair}: expected key=value`);
    params.append(String(pair).slice(0, eq), String(pair).slice(eq + 1));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

/**
 * The request body: `--data` inline must be JSON; `@file` and `@-` are read and sent as they are
 * (a body of megabytes does not fit an argument list).
 */
function requestBody(data: string | undefined, stdin: () => Buffer, cwd: string): Uint8Array | string | undefined {
  if (data === undefined) return undefined;
  if (data === '@-') return stdin();
  if (data.startsWith('@')) {
    const file = data.slice(1);
    try {
      return readFileSync(path.resolve(cwd, file));
    } catch (err) {
      throw new CliError(`--data ${data}: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  }
  try {
    JSON.parse(data);
  } catch {
    throw new CliError(`--data is not valid JSON: ${data} (use --data @file to send a file as it is)`);
  }
  return data;
}

/** Types whose bodies are text: they end with a newline on a terminal. */
const TEXT_TYPE = /^(text\/|application\/([\w.+-]*\+)?(json|xml|javascript)\b)/i;

/**
 * `islet invoke <name>`: calls the function (POST by default) and writes its answer's body to
 * stdout, whatever the status; `--include` writes the status line and headers first. An answer of
 * 400 or more also says its status on stderr (with the user's stack for a failed call) and exits 1.
 */
export async function invoke(name: string, options: InvokeOptions = {}): Promise<void> {
  const env = options.env ?? process.env;
  const credentials = requireAccount(env);
  const write = options.write ?? ((chunk: string | Uint8Array) => process.stdout.write(chunk));
  const method = (options.method ?? 'POST').toUpperCase();
  const body = requestBody(options.data, options.stdin ?? (() => readFileSync(0)), options.cwd ?? process.cwd());
  const rest = options.path ? (options.path.startsWith('/') ? options.path : `/${options.path}`) : '';
  const url = `${credentials.url}/v2/run/${credentials.accountId}/${encodeURIComponent(name)}${rest}${queryString(options.query)}`;
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers: { 'X-Service-Api-Key': credentials.apiKey, 'Content-Type': 'application/json' },
      body: method === 'GET' || method === 'HEAD' ? undefined : (body ?? ''),
      redirect: 'manual',
    });
  } catch (err) {
    throw new CliError(`cannot reach the islet server at ${credentials.url}: ${((err as Error & { cause?: Error }).cause ?? (err as Error)).message}`);
  }
  const bytes = new Uint8Array(await response.arrayBuffer());
  const statusText = STATUS_CODES[response.status] ?? '';
  if (options.include) {
    let head = `HTTP/1.1 ${response.status} ${statusText}\n`;
    response.headers.forEach((value, header) => (head += `${header}: ${value}\n`));
    write(`${head}\n`);
  }
  const location = response.headers.get('location');
  if (!options.include && location && response.status >= 300 && response.status < 400 && bytes.byteLength === 0) {
    write(`${response.status} redirect to ${location}\n`);
    return;
  }
  if (bytes.byteLength > 0) {
    write(bytes);
    if (bytes[bytes.byteLength - 1] !== 0x0a && TEXT_TYPE.test(response.headers.get('content-type') ?? '')) write('\n');
  }
  if (response.status >= 400) throw failure(response.status, statusText, bytes, keyOrigin(env));
}

/** The one-line status of an answer of 400 or more (an islet error's code and message), and the user's stack. */
function failure(status: number, statusText: string, bytes: Uint8Array, origin: string | undefined): CliError {
  let reason = statusText;
  let stack: string | undefined;
  try {
    const error = JSON.parse(Buffer.from(bytes).toString('utf8')) as { errorCode?: unknown; message?: unknown; stack?: unknown };
    if (typeof error.errorCode === 'string') {
      reason = `${error.errorCode}: ${String(error.message)}`;
      if (['ERR_FORBIDDEN', 'ERR_BAD_KEY', 'ERR_NO_KEY'].includes(error.errorCode) && origin) reason += ` (the key came from ${origin})`;
      if (typeof error.stack === 'string') stack = stackBelow(String(error.message), error.stack) || undefined;
    }
  } catch {
    // not an islet error: the status says it
  }
  return new CliError(`${status} ${reason}`, 1, stack);
}
