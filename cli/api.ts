import { request } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { CliError } from './errors';

export interface ApiError {
  errorCode: string;
  message: string;
  [key: string]: unknown;
}

/** An error answer of the islet server, with its code and details. */
export class ServerError extends CliError {
  constructor(
    readonly status: number,
    readonly body: ApiError,
  ) {
    super(`${body.errorCode}: ${body.message}`);
  }
}

function unreachable(url: string, err: Error): CliError {
  return new CliError(`cannot reach the islet server at ${url}: ${(err as NodeJS.ErrnoException).code ?? err.message} (is it running? check "islet show url")`);
}

/** JSON request to the management API (with a JSON body when given); throws ServerError on an error answer. */
export async function apiRequest<T>(baseUrl: string, method: string, path: string, apiKey: string | undefined, body?: unknown): Promise<T> {
  let response: Response;
  const headers: Record<string, string> = apiKey ? { 'X-Service-Api-Key': apiKey } : {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  try {
    response = await fetch(`${baseUrl}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (err) {
    throw unreachable(baseUrl, ((err as Error & { cause?: Error }).cause ?? err) as Error);
  }
  return readJson<T>(response.status, await response.text());
}

function readJson<T>(status: number, text: string): T {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new CliError(`the server answered ${status} with a body that is not JSON: ${text.slice(0, 200)}`);
  }
  if (status >= 400) throw new ServerError(status, body as ApiError);
  return body as T;
}

/**
 * Uploads `body` with PUT, writing it in chunks so `onProgress` can report bytes sent
 * (a deploy bundle can be up to 100 MiB).
 */
export function upload<T>(baseUrl: string, path: string, apiKey: string, contentType: string, body: Buffer, onProgress: (sent: number, total: number) => void): Promise<T> {
  const url = new URL(`${baseUrl}${path}`);
  const send = url.protocol === 'https:' ? httpsRequest : request;
  return new Promise((resolve, reject) => {
    const req = send(url, {
      // A connection of its own, as a CLI process always had: run in a test's process (three
      // deploys at once), Node's keep-alive agent handed an upload a socket the server had dropped
      // (ECONNRESET).
      agent: false,
      method: 'PUT',
      headers: { 'content-type': contentType, 'content-length': body.length, 'x-service-api-key': apiKey },
    });
    req.on('error', (err) => reject(unreachable(baseUrl, err)));
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        try {
          resolve(readJson<T>(res.statusCode ?? 0, Buffer.concat(chunks).toString('utf8')));
        } catch (err) {
          reject(err);
        }
      });
    });
    const CHUNK = 256 * 1024;
    let offset = 0;
    const writeMore = (): void => {
      while (offset < body.length) {
        const end = Math.min(offset + CHUNK, body.length);
        const ok = req.write(body.subarray(offset, end));
        offset = end;
        onProgress(offset, body.length);
        if (!ok) {
          req.once('drain', writeMore);
          return;
        }
      }
      req.end();
    };
    writeMore();
  });
}
