import { ServiceError } from './errors';
import type { Limits } from './limits';
import type { Catalog } from './store/catalog';
import type { AccountRecord, ApiKeyRecord, KeyScope, Store } from './store/store';
import { backgroundFailed } from './server-log';

/**
 * An account's share of the server: its calls in flight and a token bucket for its rate. One per
 * account, made on its first call; its bounds are read again when the account's record changes.
 */
export class Gate {
  inflight = 0;
  maxInFlight = 0;
  /** Tokens added per millisecond (0: no rate bound). */
  private perMs = 0;
  private burst = 0;
  private tokens = 0;
  private refilledAt = 0;
  /** The record the bounds were read from. */
  source: AccountRecord | undefined;
  /**
   * The refusals, made once: under a flood most calls are refused, and a fresh Error (its stack
   * captured) for each would make refusing cost nearly what serving does.
   */
  private full: ServiceError | undefined;
  private readonly overRate: ServiceError[] = [];

  configure(record: AccountRecord | undefined, limits: Limits): void {
    const first = this.refilledAt === 0;
    this.source = record;
    const own = record?.limits ?? {};
    const share = limits.accountShare;
    this.maxInFlight = Math.ceil((own.maxInFlight ?? limits.accountMaxInFlight) * share);
    const rate = (own.ratePerSec ?? limits.accountRatePerSec) * share;
    this.perMs = rate / 1000;
    this.burst = Math.max(1, (own.burst ?? limits.accountBurst) * share || rate);
    // A new bucket starts full; a reconfigured one keeps what it had (a change is no refill).
    this.tokens = first ? this.burst : Math.min(this.tokens, this.burst);
    this.refilledAt = performance.now();
    this.full = undefined;
    this.overRate.length = 0;
  }

  /** Takes a place for one call, or throws ERR_RATE_LIMITED with the seconds to wait. */
  enter(accountId: string): void {
    if (this.inflight >= this.maxInFlight) {
      throw (this.full ??= new ServiceError('ERR_RATE_LIMITED', `account ${accountId} has ${this.maxInFlight} calls in flight, its limit`, { retryAfter: 1 }));
    }
    if (this.perMs > 0) {
      const now = performance.now();
      this.tokens = Math.min(this.burst, this.tokens + (now - this.refilledAt) * this.perMs);
      this.refilledAt = now;
      if (this.tokens < 1) {
        const retryAfter = Math.max(1, Math.ceil((1 - this.tokens) / this.perMs / 1000));
        const rate = Math.round(this.perMs * 1000);
        throw (this.overRate[retryAfter] ??= new ServiceError('ERR_RATE_LIMITED', `account ${accountId} is over its rate of ${rate} call${rate === 1 ? '' : 's'} per second`, { retryAfter }));
      }
      this.tokens -= 1;
    }
    this.inflight++;
  }
}

/**
 * Who is this key, and may it do this: the one place that answers it, for calls and management
 * alike (scope, revocation), and that holds each account to its share (calls in flight, rate).
 * Keys are checked against the catalog, which a revocation reaches before the write that made it
 * returns, so a revoked key is refused on the next call even if it matched a moment before.
 */
export class Admission {
  private readonly gates = new Map<string, Gate>();

  constructor(
    private readonly catalog: Catalog,
    private readonly limits: Limits,
  ) {}

  /** A call of a secured function: any valid key of the account (both scopes may call); answers the key's record. */
  checkCallKey(accountId: string, apiKey: string | undefined, functionName: string): ApiKeyRecord {
    if (!apiKey) throw new ServiceError('ERR_NO_KEY', `function ${functionName} is secured: send an API key of the account in the X-Service-Api-Key header`);
    const key = this.catalog.verifyKey(accountId, apiKey);
    if (!key) throw new ServiceError('ERR_BAD_KEY', `the API key is not valid for account ${accountId}`);
    return key;
  }

  /** The key a call of a public function came with, when it is one of the account's (no refusal: a public function takes any call). */
  callerOf(accountId: string, apiKey: string | undefined): ApiKeyRecord | undefined {
    return apiKey ? this.catalog.verifyKey(accountId, apiKey) : undefined;
  }

  /** A management request on `accountId` that needs `scope`; answers the key's record. */
  authorize(accountId: string, apiKey: string | undefined, scope: KeyScope): ApiKeyRecord {
    if (!apiKey) throw new ServiceError('ERR_NO_KEY', 'send an API key of the account in the X-Service-Api-Key header');
    const key = this.catalog.verifyKey(accountId, apiKey);
    if (!key) throw new ServiceError('ERR_BAD_KEY', `the API key is not valid for account ${accountId}`);
    if (scope === 'admin' && key.scope !== 'admin') {
      throw new ServiceError('ERR_FORBIDDEN', `this needs a key with the admin scope; the key ${key.name} has the invoke scope, which may only call functions`);
    }
    return key;
  }

  /** The account and record of any valid key (whoami). */
  identify(apiKey: string | undefined): { accountId: string; key: ApiKeyRecord } {
    if (!apiKey) throw new ServiceError('ERR_NO_KEY', 'send an API key in the X-Service-Api-Key header');
    const accountId = this.catalog.accountOfKey(apiKey);
    const key = accountId === undefined ? undefined : this.catalog.verifyKey(accountId, apiKey);
    if (accountId === undefined || !key) throw new ServiceError('ERR_BAD_KEY', 'the API key is not valid for any account');
    return { accountId, key };
  }

  /** Takes a place for a call of the account (release it with `gate.inflight--`); ERR_RATE_LIMITED when over a bound. */
  enter(accountId: string): Gate {
    let gate = this.gates.get(accountId);
    if (gate === undefined) {
      gate = new Gate();
      gate.configure(this.catalog.account(accountId), this.limits);
      this.gates.set(accountId, gate);
    }
    gate.enter(accountId);
    return gate;
  }

  /** An account's record changed: its bounds are read again (its calls in flight stay counted). */
  accountChanged(accountId: string): void {
    const gate = this.gates.get(accountId);
    const record = this.catalog.account(accountId);
    if (gate && gate.source !== record) gate.configure(record, this.limits);
  }
}

/** Writes when keys were last used (to the minute), from the catalog's marks, every `intervalMs`. */
export class KeyUseRecorder {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly catalog: Catalog,
    private readonly store: Store,
    private readonly intervalMs = 60_000,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.flush(), this.intervalMs);
    this.timer.unref();
  }

  /** Records the uses marked since the last flush. */
  async flush(): Promise<void> {
    const at = new Date().toISOString();
    for (const [accountId, ids] of this.catalog.takeUsedKeys()) {
      await this.store
        .touchKeys(accountId, Object.fromEntries(ids.map((id) => [id, at])))
        .catch((err: unknown) => backgroundFailed('key-use-write', err, `the last use of ${ids.length} key(s) of account ${accountId} was not recorded`));
    }
  }

  /** The uses not yet written, as they will be (for a listing made before the next flush). */
  pending(accountId: string): Set<string> {
    return this.catalog.usedKeys(accountId);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.flush();
  }
}
