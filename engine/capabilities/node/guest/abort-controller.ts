// What the abort-controller package stands in for: the platform's own AbortController and AbortSignal.
const g = globalThis as unknown as Record<string, unknown>;
export const AbortController = g.AbortController;
export const AbortSignal = g.AbortSignal;
export default AbortController;
