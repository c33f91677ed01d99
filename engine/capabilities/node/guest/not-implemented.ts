// What throws when a function uses something a sandbox cannot offer: an error naming it. Also
// islet's stand-in for unenv's "not implemented" helpers (see scripts/build.js).

export function createNotImplementedError(name: string): Error {
  return Object.assign(new Error(`${name} is not available in islet functions`), { code: 'ERR_METHOD_NOT_IMPLEMENTED' });
}

export function notImplemented(name: string): (...args: unknown[]) => never {
  return () => {
    throw createNotImplementedError(name);
  };
}

export function notImplementedAsync(name: string): (...args: unknown[]) => never {
  return Object.assign(notImplemented(name), { __promisify__: notImplemented(`${name}.__promisify__`) });
}

export function notImplementedClass(name: string): new (...args: unknown[]) => object {
  return class {
    constructor() {
      throw createNotImplementedError(name);
    }
  };
}

export function mergeFns(...functions: ((...args: unknown[]) => void)[]): (...args: unknown[]) => void {
  return (...args) => {
    for (const fn of functions) fn(...args);
  };
}

export function rawHeaders(headers: Record<string, string | string[]>): string[] {
  const raw: string[] = [];
  for (const key in headers) {
    const value = headers[key]!;
    if (Array.isArray(value)) for (const v of value) raw.push(key, v);
    else raw.push(key, value);
  }
  return raw;
}
