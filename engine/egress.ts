import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import * as os from 'node:os';
import ipaddr from 'ipaddr.js';
import { Agent, buildConnector, fetch } from 'undici';

export interface EgressOptions {
  /** Let functions reach private, loopback and link-local addresses (off by default). */
  allowPrivate: boolean;
  /** Ports this server listens on: loopback/local connections to them are the service itself. */
  selfPorts: () => number[];
  maxResponseBytes: number;
  timeoutMs: number;
}

/** What a function's `fetch` may do; everything arrives as copied, untrusted data from the sandbox. */
interface FetchRequest {
  url: string;
  method: string;
  headers: [string, string][];
  redirect: string;
}

/**
 * Outbound HTTP for functions. Every connection, redirects included, is checked after DNS
 * resolution against the address it really goes to, so DNS names and redirects pointing at
 * internal addresses are refused like literal ones.
 */
export class Egress {
  private readonly agent: Agent;

  constructor(private readonly options: EgressOptions) {
    const base = buildConnector({ timeout: 10_000 });
    this.agent = new Agent({
      connect: (opts, callback) => {
        const host = opts.hostname.replace(/^\[|\]$/g, '');
        const port = Number(opts.port) || (opts.protocol === 'https:' ? 443 : 80);
        this.resolveAllowed(host, port).then(
          (address) => base({ ...opts, hostname: address, servername: opts.servername ?? (isIP(host) ? undefined : host) } as typeof opts, callback),
          (err: Error) => callback(err, null),
        );
      },
    });
  }

  async fetch(requestJson: string, body: Uint8Array | undefined): Promise<{ payload: string; body: Uint8Array }> {
    const request = parseRequest(requestJson);
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      throw new TypeError(`fetch: invalid URL ${JSON.stringify(request.url)}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`fetch: unsupported protocol ${url.protocol}`);
    let response;
    try {
      response = await fetch(url, {
        method: request.method,
        headers: request.headers,
        body: body && request.method !== 'GET' && request.method !== 'HEAD' ? body : undefined,
        redirect: request.redirect === 'manual' || request.redirect === 'error' ? request.redirect : 'follow',
        dispatcher: this.agent,
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
    } catch (err) {
      const cause = (err as Error & { cause?: Error }).cause;
      throw new TypeError(`fetch failed: ${cause?.message ?? (err as Error).message}`);
    }
    const chunks: Uint8Array[] = [];
    let size = 0;
    if (response.body) {
      for await (const chunk of response.body) {
        size += chunk.byteLength;
        if (size > this.options.maxResponseBytes) {
          throw new TypeError(`fetch: response body larger than ${this.options.maxResponseBytes} bytes`);
        }
        chunks.push(chunk);
      }
    }
    const headers: [string, string][] = [];
    response.headers.forEach((value, name) => headers.push([name, value]));
    return {
      payload: JSON.stringify({ status: response.status, statusText: response.statusText, headers, url: response.url, redirected: response.redirected }),
      body: Buffer.concat(chunks),
    };
  }

  close(): Promise<void> {
    return this.agent.close();
  }

  private async resolveAllowed(host: string, port: number): Promise<string> {
    const addresses = isIP(host) ? [host] : (await lookup(host, { all: true })).map((a) => a.address);
    for (const address of addresses) if (this.allowed(address, port)) return address;
    throw new Error(`connections to ${host} (${addresses.join(', ')}) are not allowed from functions: private, loopback and link-local addresses are blocked`);
  }

  private allowed(address: string, port: number): boolean {
    if (this.options.allowPrivate) return true;
    let parsed: ipaddr.IPv4 | ipaddr.IPv6;
    try {
      parsed = ipaddr.process(address);
    } catch {
      return false;
    }
    const range = parsed.range();
    if (range === 'unicast') return true;
    // The service itself, on its own port, is always reachable (function-to-function over HTTP).
    return this.options.selfPorts().includes(port) && (range === 'loopback' || range === 'unspecified' || isLocalInterface(parsed));
  }
}

function isLocalInterface(address: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  const text = address.toString();
  return Object.values(os.networkInterfaces()).some((list) => list?.some((i) => ipaddr.process(i.address).toString() === text));
}

function parseRequest(json: string): FetchRequest {
  const value = JSON.parse(json) as Partial<FetchRequest>;
  const headers = Array.isArray(value.headers)
    ? value.headers.filter((h): h is [string, string] => Array.isArray(h) && typeof h[0] === 'string' && typeof h[1] === 'string')
    : [];
  return {
    url: String(value.url ?? ''),
    method: /^[A-Z]{1,16}$/.test(String(value.method)) ? String(value.method) : 'GET',
    headers,
    redirect: String(value.redirect ?? 'follow'),
  };
}
