import { ApiError, whoami, type Session } from './api';

/**
 * The signed-in account and key live in this tab's sessionStorage only: gone when the tab closes,
 * never in a cookie (which the browser would send by itself) or a URL (which history and logs keep).
 */
const STORAGE_KEY = 'islet.console.session';

export function loadSession(): Session | undefined {
  try {
    const saved = JSON.parse(sessionStorage.getItem(STORAGE_KEY) ?? 'null') as Session | null;
    return saved && typeof saved.accountId === 'string' && typeof saved.key === 'string' ? saved : undefined;
  } catch {
    return undefined;
  }
}

export function saveSession(session: Session): void {
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify(session));
}

export function clearSession(): void {
  sessionStorage.removeItem(STORAGE_KEY);
}

/** Checks the key with the server; the account id typed must be the key's. */
export async function signIn(accountId: string, key: string): Promise<Session> {
  const account = accountId.trim();
  const secret = key.trim();
  if (!account || !secret) throw new ApiError(0, 'ERR_BAD_REQUEST', 'Enter the account id and a key.');
  const who = await whoami(secret);
  if (who.accountId !== account) throw new ApiError(403, 'ERR_BAD_KEY', `This key is not a key of account ${account}.`);
  return { accountId: account, key: secret, scope: who.key?.scope ?? 'admin', keyName: who.key?.name };
}
