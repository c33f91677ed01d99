/**
 * Checks of what crosses from a sandbox to the host, written once per operation in its
 * capability's ops.ts: each check gives the payload's type (`Infer`), shared by the guest (as a
 * type only: nothing of this file is bundled into an isolate) and the host, which runs the check
 * on every payload before the operation sees it (native.ts, host-ops.ts). A failure is an
 * OpError with Node's ERR_INVALID_ARG_TYPE and the field's label: `algorithm must be a string`.
 * Fields that carry a user's value on to Node, which checks it with its own messages, are `any()`.
 * No imports but the error: the guests' type check has no Node.
 */
import { OpError } from './errors';

/** Checks `value` (found at `at`) and answers it with its type. */
export type Check<T> = (value: unknown, at: string) => T;
/** The type a check answers. */
export type Infer<C> = C extends Check<infer T> ? T : never;

function fail(at: string, what: string): never {
  throw new OpError('ERR_INVALID_ARG_TYPE', `${at} must be ${what}`);
}

/** A field checked by its own label (what the message names) rather than its path. */
export function labelled<T>(label: string, check: Check<T>): Check<T> {
  return (value) => check(value, label);
}

export const string = (): Check<string> => (value, at) => (typeof value === 'string' ? value : fail(at, 'a string'));
export const number = (): Check<number> => (value, at) => (typeof value === 'number' ? value : fail(at, 'a number'));
export const boolean = (): Check<boolean> => (value, at) => (typeof value === 'boolean' ? value : fail(at, 'a boolean'));
/** A length or an index: an integer of 0 or more. */
export const count = (): Check<number> => (value, at) => (Number.isSafeInteger(value) && (value as number) >= 0 ? (value as number) : fail(at, 'an integer of 0 or more'));
/** Anything: a value the guest passes on from user code, checked by what receives it (Node). */
export const any = (): Check<unknown> => (value) => value;

export function oneOf<const T extends readonly (string | number | boolean | null)[]>(values: T): Check<T[number]> {
  return (value, at) => (values.includes(value as T[number]) ? (value as T[number]) : fail(at, `one of ${values.map((v) => JSON.stringify(v)).join(', ')}`));
}

export function optional<T>(check: Check<T>): Check<T | undefined> {
  return (value, at) => (value === undefined ? undefined : check(value, at));
}

export function nullable<T>(check: Check<T>): Check<T | null> {
  return (value, at) => (value === null ? null : check(value, at));
}

export function array<T>(check: Check<T>): Check<T[]> {
  return (value, at) => (Array.isArray(value) ? value.map((item, i) => check(item, `${at}[${i}]`)) : fail(at, 'an array'));
}

/** A plain object whose values are not checked (options passed on to Node). */
export const record = (): Check<Record<string, unknown>> => (value, at) =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : fail(at, 'an object');

/** Options passed on to Node: an object, or nothing (anything else is left out, as Node leaves it). */
export const lenientRecord = (): Check<Record<string, unknown> | undefined> => (value) =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;

type Shape = Record<string, Check<unknown>>;
type OptionalKeys<S extends Shape> = { [K in keyof S]: undefined extends Infer<S[K]> ? K : never }[keyof S];
/** The type an object check answers: fields that may be undefined are optional. */
export type ObjectOf<S extends Shape> = { -readonly [K in Exclude<keyof S, OptionalKeys<S>>]: Infer<S[K]> } & { -readonly [K in OptionalKeys<S>]?: Infer<S[K]> };

/** An object with these fields (others are left out of what the host sees). */
export function object<S extends Shape>(shape: S): Check<ObjectOf<S>> {
  const fields = Object.entries(shape);
  return (value, at) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(at, 'an object');
    const source = value as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const [name, check] of fields) {
      const field = check(source[name], at ? `${at}.${name}` : name);
      if (field !== undefined) out[name] = field;
    }
    return out as ObjectOf<S>;
  };
}

/** One of several object shapes, told apart by the value of `key` (`op`, `kind`). */
export function variants<K extends string, V extends Record<string, Check<Record<string, unknown>>>>(key: K, shapes: V): Check<{ [T in keyof V]: Infer<V[T]> & { [P in K]: T } }[keyof V]> {
  return (value, at) => {
    const tag = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
    const check = typeof tag === 'string' && Object.prototype.hasOwnProperty.call(shapes, tag) ? shapes[tag] : undefined;
    if (!check)
      return fail(
        at ? `${at}.${key}` : key,
        `one of ${Object.keys(shapes)
          .map((v) => JSON.stringify(v))
          .join(', ')}`,
      );
    return { ...check(value, at), [key]: tag } as never;
  };
}
