import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import * as os from 'node:os';
import ipaddr from 'ipaddr.js';
import { Agent, buildConnector, fetch } from 'undici';
import type { HostMemoryBudget } from '../../isolate/host-memory';
import { WHOLE_BODY_BYTES, type BodyKeeper, type EgressBody } from './bodies';
import { isAllowedAddress } from './egress-address';
import type { FetchAnswer, FetchRequest } from './ops';

export interface EgressOptions {
  /** Let functions reach private, loopback and link-local addresses (off by default). */
  allowPrivate: boolean;
  /**
   * Response bytes each account's functions may read per second (as much at once); past it, its
   * fetches read more slowly (default: no bound).
   */
  accountBytesPerSec?: number;
  /** Ports this server listens on: loopback/local connections to them are the service itself. */
  selfPorts: () => number[];
  maxResponseBytes: number;
  timeoutMs: number;
}

/** Why a request did not get a response, as data: the sandboxes turn it into their own errors. */
export type EgressErrorCode =
  | 'ERR_EGRESS_URL'
  | 'ERR_EGRESS_BLOCKED'
  | 'ERR_EGRESS_DNS'
  | 'ERR_EGRESS_REFUSED'
  | 'ERR_EGRESS_TIMEOUT'
  | 'ERR_EGRESS_TLS'
  | 'ERR_EGRESS_TOO_LARGE'
  | 'ERR_EGRESS_FAILED';

/** A refused or failed request. A TypeError, as `fetch` throws; the code says which. */
export class EgressError extends TypeError {
  constructor(
    readonly code: EgressErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** Marks the connector's refusal so the failure it causes inside undici can be told apart. */
const BLOCKED = Symbol('blocked');

/** How functions' fetches ended, counted for the metrics (`islet_egress_requests_total{outcome}`). */
export interface EgressCounts {
  /** An answer came back (whatever its status). */
  ok: number;
  /** The address is not one functions may reach. */
  refused: number;
  /** Past the timeout. */
  timeout: number;
  /** The answer's body was over the limit. */
  too_large: number;
  /** Not a fetchable URL (bad URL, protocol). */
  invalid: number;
  /** Anything else: DNS, connection refused, TLS errors. */
  failed: number;
}

/**
 * Outbound HTTP for functions. Every connection, redirects included, is checked after DNS
 * resolution against the address it really goes to, so DNS names and redirects pointing at
 * internal addresses are refused like literal ones.
 */
export class Egress {
  private readonly agent: Agent;
  private readonly pacer: Pacer | undefined;
  readonly counts: EgressCounts = { ok: 0, refused: 0, timeout: 0, too_large: 0, invalid: 0, failed: 0 };

  constructor(private readonly options: EgressOptions) {
    this.pacer = options.accountBytesPerSec ? new Pacer(options.accountBytesPerSec) : undefined;
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

  /**
   * One request of a function. The response body's bytes are taken from `budget` as they arrive
   * and given back once it is read whole (its holder takes them again until the body is handed on).
   */
  async fetch(request: FetchRequest, body: Uint8Array | undefined, budget?: HostMemoryBudget, account?: string, bodies?: BodyKeeper): Promise<{ payload: string; body: Uint8Array | undefined }> {
    try {
      const answer = await this.send(request, body, budget, account, bodies);
      this.counts.ok++;
      return answer;
    } catch (err) {
      this.counts[outcomeOf(err)]++;
      throw err;
    }
  }

  private async send(
    request: FetchRequest,
    body: Uint8Array | undefined,
    budget: HostMemoryBudget | undefined,
    account: string | undefined,
    bodies: BodyKeeper | undefined,
  ): Promise<{ payload: string; body: Uint8Array | undefined }> {
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      throw new EgressError('ERR_EGRESS_URL', `fetch: invalid URL ${JSON.stringify(request.url)}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new EgressError('ERR_EGRESS_URL', `fetch: unsupported protocol ${url.protocol}`);
    const timeoutMs = Math.min(request.timeoutMs ?? this.options.timeoutMs, this.options.timeoutMs);
    let response;
    try {
      response = await fetch(url, {
        method: request.method,
        headers: request.headers,
        body: body && request.method !== 'GET' && request.method !== 'HEAD' ? body : undefined,
        redirect: request.redirect === 'manual' || request.redirect === 'error' ? request.redirect : 'follow',
        dispatcher: this.agent,
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      const cause = (err as Error & { cause?: Error }).cause;
      throw new EgressError(failureCode(err as Error), `fetch failed: ${cause?.message ?? (err as Error).message}`);
    }
    const headers: [string, string][] = [];
    response.headers.forEach((value, name) => headers.push([name, value]));
    const answer: FetchAnswer = { status: response.status, statusText: response.statusText, headers, url: response.url, redirected: response.redirected };
    const length = response.headers.get('content-length');
    if (bodies && response.body && !(length !== null && Number(length) <= WHOLE_BODY_BYTES)) {
      answer.stream = bodies.add(this.bodyOf(response.body as ReadableStream<Uint8Array>, account));
      return { payload: JSON.stringify(answer), body: undefined };
    }
    const chunks: Uint8Array[] = [];
    let size = 0;
    let reserved = 0;
    if (response.body) {
      try {
        for await (const chunk of response.body) {
          size += chunk.byteLength;
          if (size > this.options.maxResponseBytes) {
            throw new EgressError('ERR_EGRESS_TOO_LARGE', `fetch: response body larger than ${this.options.maxResponseBytes} bytes`);
          }
          if (budget) {
            if (!budget.reserve(chunk.byteLength)) throw new EgressError('ERR_EGRESS_TOO_LARGE', 'fetch: the response bodies this function instance holds would pass its memory limit');
            reserved += chunk.byteLength;
          }
          chunks.push(chunk);
          if (account !== undefined && this.pacer) await this.pacer.take(account, chunk.byteLength);
        }
      } catch (err) {
        // Benign: the body is given up because of `err`, which is thrown; a cancel that fails has nothing left to free.
        await response.body.cancel().catch(() => undefined);
        if (err instanceof EgressError) throw err;
        // The body stopped coming: the timeout, or the peer went away.
        throw new EgressError(failureCode(err as Error), `fetch failed while reading the body: ${(err as Error).message}`);
      } finally {
        budget?.release(reserved);
      }
    }
    return {
      payload: JSON.stringify(answer),
      body: Buffer.concat(chunks),
    };
  }

  /**
   * A body read as the function asks for it: each chunk waits on the host until then, so the
   * function's reading paces the upstream. The account's pacing applies per chunk; the request's
   * timeout still bounds the whole exchange.
   */
  private bodyOf(stream: ReadableStream<Uint8Array>, account: string | undefined): EgressBody {
    const reader = stream.getReader();
    return {
      next: async () => {
        let next: { done: boolean; value?: Uint8Array };
        try {
          next = await reader.read();
        } catch (err) {
          throw new EgressError(failureCode(err as Error), `fetch failed while reading the body: ${(err as Error).message}`);
        }
        if (next.done || !next.value) return undefined;
        if (account !== undefined && this.pacer) await this.pacer.take(account, next.value.byteLength);
        return next.value;
      },
      // Benign: the function no longer wants the body; a stream that failed already is released.
      cancel: () => reader.cancel().catch(() => undefined),
      failed: reader.closed.then(
        () => undefined,
        (err: unknown) => new EgressError(failureCode(err as Error), `fetch failed while reading the body: ${(err as Error).message}`),
      ),
    };
  }

  close(): Promise<void> {
    return this.agent.close();
  }

  /**
   * The address a function's TCP socket to `host`:`port` goes to (engine/capabilities/sockets): the
   * first of the name's addresses that functions may reach, by fetch's rule without its exception
   * for the server's own ports (a raw socket is not a call). The socket connects to that address,
   * so no second lookup can answer another. Throws ENOTFOUND as Node does, or ERR_EGRESS_BLOCKED
   * naming the addresses and the rule.
   */
  async socketAddress(host: string, port: number): Promise<string> {
    let addresses: string[];
    try {
      addresses = isIP(host) ? [host] : (await lookup(host, { all: true })).map((a) => a.address);
    } catch (err) {
      const code = String((err as { code?: unknown }).code ?? 'ENOTFOUND');
      throw Object.assign(new Error(`getaddrinfo ${code} ${host}`), { code });
    }
    const policy = { allowPrivate: this.options.allowPrivate, selfPorts: [], isLocalInterface };
    const allowed = addresses.find((address) => isAllowedAddress(address, port, policy));
    if (allowed !== undefined) return allowed;
    throw new EgressError(
      'ERR_EGRESS_BLOCKED',
      `connect to ${host}:${port} refused: ${addresses.join(', ')} ${addresses.length > 1 ? 'are' : 'is'} not an address functions may reach (private, loopback, link-local and metadata addresses are refused unless the operator allows them with --allow-private-egress)`,
    );
  }

  /** Takes `bytes` from the account's pacing, which fetch's response bodies and sockets' bytes share. */
  pace(account: string, bytes: number): Promise<void> | undefined {
    return this.pacer?.take(account, bytes);
  }

  private async resolveAllowed(host: string, port: number): Promise<string> {
    const addresses = isIP(host) ? [host] : (await lookup(host, { all: true })).map((a) => a.address);
    for (const address of addresses) if (this.allowed(address, port)) return address;
    throw Object.assign(new Error(`connections to ${host} (${addresses.join(', ')}) are not allowed from functions: private, loopback and link-local addresses are blocked`), { [BLOCKED]: true });
  }

  private allowed(address: string, port: number): boolean {
    // The service itself, on its own port, is always reachable (function-to-function over HTTP).
    return isAllowedAddress(address, port, { allowPrivate: this.options.allowPrivate, selfPorts: this.options.selfPorts(), isLocalInterface });
  }
}

/**
 * Each account's response bytes per second, as a token bucket that may go into debt: a fetch that
 * takes more waits before it reads on. Reading bodies is the server thread's work (undici, copies
 * into isolates, the garbage they leave): an account fetching 40 MB a round without pause took
 * another account's hello from a p99 of 7 ms to 214 ms.
 */
class Pacer {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(private readonly ratePerSec: number) {}

  async take(account: string, bytes: number): Promise<void> {
    const now = performance.now();
    let bucket = this.buckets.get(account);
    if (!bucket) {
      if (this.buckets.size >= 100_000) this.buckets.clear();
      this.buckets.set(account, (bucket = { tokens: this.ratePerSec, at: now }));
    } else {
      bucket.tokens = Math.min(this.ratePerSec, bucket.tokens + ((now - bucket.at) / 1000) * this.ratePerSec);
      bucket.at = now;
    }
    bucket.tokens -= bytes;
    if (bucket.tokens < 0) await new Promise((resolve) => setTimeout(resolve, (-bucket.tokens / this.ratePerSec) * 1000));
  }
}

const OUTCOME_OF: Record<EgressErrorCode, Exclude<keyof EgressCounts, 'ok'>> = {
  ERR_EGRESS_URL: 'invalid',
  ERR_EGRESS_BLOCKED: 'refused',
  ERR_EGRESS_TIMEOUT: 'timeout',
  ERR_EGRESS_TOO_LARGE: 'too_large',
  ERR_EGRESS_DNS: 'failed',
  ERR_EGRESS_REFUSED: 'failed',
  ERR_EGRESS_TLS: 'failed',
  ERR_EGRESS_FAILED: 'failed',
};

function outcomeOf(err: unknown): Exclude<keyof EgressCounts, 'ok'> {
  return err instanceof EgressError ? OUTCOME_OF[err.code] : 'failed';
}

function isLocalInterface(address: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  const text = address.toString();
  return Object.values(os.networkInterfaces()).some((list) => list?.some((i) => ipaddr.process(i.address).toString() === text));
}

/** The code of a failure thrown by undici's fetch (its cause says what went wrong). */
function failureCode(err: Error): EgressErrorCode {
  const cause = (err as Error & { cause?: Error & { code?: string; [BLOCKED]?: boolean } }).cause ?? (err as Error & { code?: string });
  if ((cause as { [BLOCKED]?: boolean })[BLOCKED]) return 'ERR_EGRESS_BLOCKED';
  if (err.name === 'TimeoutError' || cause.name === 'TimeoutError' || cause.code === 'UND_ERR_CONNECT_TIMEOUT') return 'ERR_EGRESS_TIMEOUT';
  const code = String(cause.code ?? '');
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_FAIL') return 'ERR_EGRESS_DNS';
  if (code === 'ECONNREFUSED') return 'ERR_EGRESS_REFUSED';
  if (/CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_/.test(code)) return 'ERR_EGRESS_TLS';
  return 'ERR_EGRESS_FAILED';
}
