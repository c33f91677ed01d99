import { ServiceError } from '../../errors';

/**
 * The WebSocket connections each account's functions hold in this process (upgrades being
 * answered count too), bounded by `max` (the account's share of `connectionsPerAccount`).
 */
export class AccountConnections {
  private readonly held = new Map<string, number>();

  constructor(private readonly max: number) {}

  /** Takes a connection for the account (give it back with the function answered), or throws 429 ERR_RATE_LIMITED. */
  take(accountId: string): () => void {
    const count = this.held.get(accountId) ?? 0;
    if (count >= this.max) {
      throw new ServiceError('ERR_RATE_LIMITED', `account ${accountId} has ${this.max} WebSocket connections open, its limit`, { retryAfter: 1 });
    }
    this.held.set(accountId, count + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.held.get(accountId) ?? 1) - 1;
      if (left === 0) this.held.delete(accountId);
      else this.held.set(accountId, left);
    };
  }

  /** Connections the account holds now. */
  of(accountId: string): number {
    return this.held.get(accountId) ?? 0;
  }
}
