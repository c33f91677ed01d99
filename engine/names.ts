import { ServiceError } from './errors';
import { isInvocationId } from './jobs/records';
import { isFunctionName } from './manifest';
import { isAccountId, isKeyName } from './store/keys';

/** What a name in a request's URL stands for. */
export type NameKind = 'account' | 'function' | 'key' | 'invocation';

const RULES: Record<NameKind, { valid: (value: string) => boolean; what: string; rule: string }> = {
  account: { valid: isAccountId, what: 'account id', rule: '16 characters of a-z and 0-9' },
  function: { valid: isFunctionName, what: 'function name', rule: '1-128 characters of A-Z a-z 0-9 _ -, starting with a letter or digit' },
  key: { valid: isKeyName, what: 'key name', rule: '1-64 characters of A-Z a-z 0-9 _ . -, starting with a letter or digit' },
  invocation: { valid: isInvocationId, what: 'invocation id', rule: '32 characters of 0-9 and a-f' },
};

/**
 * The one check of the names a request carries (an account id, a function or key name), made at
 * the boundary before anything else reads them: whatever passes is a single plain word that no
 * store can take for a path. ERR_BAD_REQUEST naming the rule otherwise.
 */
export function checkName(kind: NameKind, value: string): string {
  const { valid, what, rule } = RULES[kind];
  if (!valid(value)) throw new ServiceError('ERR_BAD_REQUEST', `invalid ${what} ${JSON.stringify(shorten(value))}: use ${rule}`);
  return value;
}

export function isNameKind(value: string): value is NameKind {
  return value in RULES;
}

/** Echoes at most 140 characters of a refused name (an overlong one is refused for its length). */
function shorten(value: string): string {
  return value.length > 140 ? `${value.slice(0, 140)}…` : value;
}
