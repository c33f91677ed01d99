// node8's `assert`: unenv's port of Node's assert (ok, equal, deepStrictEqual, throws, rejects,
// match, AssertionError…), with `strict`.
import * as assertModule from 'unenv/node/assert';

const assert = assertModule.default as unknown as Record<string, unknown> & ((value: unknown, message?: unknown) => void);
// As Node names it (the port leaves it `Error`).
Object.defineProperty((assert.AssertionError as { prototype: object }).prototype, 'name', { value: 'AssertionError', writable: true, configurable: true });

export default assert;
export const strict = (assert as Record<string, unknown>).strict ?? assert;
