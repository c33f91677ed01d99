// node8's `util`: the util package (format, inspect, promisify, callbackify, inherits, deprecate,
// debuglog, types) with what Node added since: isDeepStrictEqual, TextEncoder/TextDecoder,
// stripVTControlCharacters, toUSVString, aborted, parseArgs, styleText.
import * as utilPackage from 'util/';

declare const require: (id: string) => unknown;
const g = globalThis as unknown as Record<string, unknown>;
const util: Record<string, unknown> = { ...utilPackage };
delete util.default;
const types = { ...(utilPackage.types as Record<string, unknown>) };

types.isKeyObject = (value: unknown) => Object.prototype.toString.call(value) === '[object KeyObject]';
types.isCryptoKey = (value: unknown) => Object.prototype.toString.call(value) === '[object CryptoKey]';
types.isExternal = () => false;
types.isProxy = () => false;
util.types = types;

util.isDeepStrictEqual = (a: unknown, b: unknown): boolean => {
  try {
    (require('assert') as { deepStrictEqual(a: unknown, b: unknown): void }).deepStrictEqual(a, b);
    return true;
  } catch {
    return false;
  }
};
for (const name of ['TextEncoder', 'TextDecoder']) Object.defineProperty(util, name, { enumerable: true, get: () => g[name] });
util.stripVTControlCharacters = (text: string) =>
  String(text).replace(/[\u001b\u009b][[\]()#;?]*(?:(?:(?:[a-zA-Z\d]*(?:;[a-zA-Z\d]*)*)?\u0007)|(?:(?:\d{1,4}(?:;\d{0,4})*)?[\dA-ORZcf-nqry=><]))/g, '');
util.toUSVString = (text: string) =>
  String(text).toWellFormed?.() ??
  String(text).replace(/[\ud800-\udfff]/g, (c, i, s: string) =>
    (/[\ud800-\udbff]/.test(c) && /[\udc00-\udfff]/.test(s[i + 1] ?? '')) || (/[\udc00-\udfff]/.test(c) && /[\ud800-\udbff]/.test(s[i - 1] ?? '')) ? c : '\ufffd',
  );
util.formatWithOptions = (_options: unknown, ...args: unknown[]) => (utilPackage.default as unknown as { format(...a: unknown[]): string }).format(...args);
util.styleText = (_format: unknown, text: string) => String(text);
util.aborted = (signal: { aborted: boolean; addEventListener(t: string, f: () => void, o?: object): void }) =>
  new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
util.getSystemErrorName = (code: number) => `Unknown system error ${code}`;
util.parseArgs = () => {
  throw Object.assign(new Error('util.parseArgs is not available in islet functions'), { code: 'ERR_METHOD_NOT_IMPLEMENTED' });
};

export default util;
export { types };
