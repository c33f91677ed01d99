import type { HttpRequest } from '@trufflesuite/uws-js-unofficial';
import { checkName, isNameKind, type NameKind } from '../engine/names';

/** The names in a request's URL, decoded, as the route's pattern declares them. */
export interface RouteNames {
  /** The account id (`:account`), or '' when the pattern has none. */
  account: string;
  /** The function's or the key's name or the invocation's id (`:function`, `:key`, `:invocation`), or '' when the pattern has none. */
  name: string;
  /** Checks every name against its rule (engine/names.ts); throws ERR_BAD_REQUEST naming the first that fails. */
  check(): void;
}

/**
 * A reader of the names a route pattern declares, by their parameter names: `:account`,
 * `:function` or `:key` (any other parameter name is a mistake, refused when the route is added).
 * Each segment is decoded once (a malformed escape stays as it is, and fails its rule).
 */
export function routeNames(pattern: string): (req: HttpRequest) => RouteNames {
  const kinds = [...pattern.matchAll(/:(\w+)/g)].map((m) => m[1]!);
  for (const kind of kinds) if (!isNameKind(kind)) throw new Error(`route ${pattern}: parameter :${kind} is not one of :account, :function, :key, :invocation`);
  const declared = kinds as NameKind[];
  return (req) => {
    const values = declared.map((_, i) => decodeSegment(req.getParameter(i) ?? ''));
    const at = (kind: NameKind) => {
      const i = declared.indexOf(kind);
      return i === -1 ? '' : values[i]!;
    };
    return {
      account: at('account'),
      name: at('function') || at('key') || at('invocation'),
      check: () => declared.forEach((kind, i) => checkName(kind, values[i]!)),
    };
  };
}

function decodeSegment(segment: string): string {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
