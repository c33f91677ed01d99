import type { ApiKeyRecord } from './store/store';

/** The request headers that name the caller's key to the function (set by the server alone). */
export const CALLER_KEY_NAME = 'x-service-key-name';
export const CALLER_KEY_SCOPE = 'x-service-key-scope';

/**
 * What a function sees of who called it: never the key itself (header-logging middleware would
 * write it where others read it), but its name and scope, when the call came with a valid key of
 * the account. A caller's own headers of those names are dropped, so the function can trust them.
 */
export function tellCaller(headers: Record<string, string>, caller: ApiKeyRecord | undefined): void {
  if (headers['x-service-api-key'] !== undefined) delete headers['x-service-api-key'];
  if (headers[CALLER_KEY_NAME] !== undefined) delete headers[CALLER_KEY_NAME];
  if (headers[CALLER_KEY_SCOPE] !== undefined) delete headers[CALLER_KEY_SCOPE];
  if (caller === undefined) return;
  headers[CALLER_KEY_NAME] = caller.name;
  headers[CALLER_KEY_SCOPE] = caller.scope;
}
