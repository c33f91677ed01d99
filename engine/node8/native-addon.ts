/**
 * Native addons (`.node` files: machine code that Node loads with dlopen) cannot run in an isolate,
 * which has no dlopen. Requiring one, found at deploy (engine/node8/build.ts) or at run time
 * (sandbox/modules.ts: node-gyp-build and bindings compute the addon's path), throws this, so a
 * package that loads its addon as it loads fails the deploy with the file's name rather than a
 * SyntaxError from reading machine code as JavaScript. A package that catches it (an optional
 * addon with a JavaScript fallback, as ws's bufferutil) runs its fallback.
 */
export const NATIVE_ADDON_CODE = 'ERR_DLOPEN_FAILED';

/** `file`: the addon's path from the function's root (`/node_modules/argon2/build/Release/argon2.node`). */
export function nativeAddonMessage(file: string): string {
  return `${file} is a native addon (machine code built for Node), which cannot run in islet's sandbox: use a pure JavaScript or WebAssembly build of the package instead`;
}
