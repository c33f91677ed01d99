// node8's `assert`: unenv's port of Node's assert (ok, equal, deepStrictEqual, throws, rejects,
// match, AssertionError…), with `strict`.
import * as assertModule from 'unenv/node/assert';

const assert = assertModule.default as unknown as Record<string, unknown> & ((value: unknown, message?: unknown) => void);

export default assert;
export const strict = (assert as Record<string, unknown>).strict ?? assert;
