import * as path from 'node:path';
import type * as UwsTypes from '@trufflesuite/uws-js-unofficial';

export type Uws = typeof UwsTypes;

/**
 * Loads the native uWebSockets.js binary directly. The package's own loader silently falls back to
 * a slow pure-Node shim when the binary does not load; islet refuses to run on it instead.
 */
export function loadUws(): Uws {
  const pkgDir = path.dirname(require.resolve('@trufflesuite/uws-js-unofficial/package.json'));
  const binary = path.join(pkgDir, 'binaries', `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`);
  let uws: Uws & { _cfg?: (key: string) => void };
  try {
    uws = require(binary) as Uws;
  } catch (err) {
    throw new Error(
      `islet needs the native uWebSockets.js binary for this platform (${path.basename(binary)}), and it did not load: ` +
        `${(err as Error).message}\nislet does not run on the slow pure-Node fallback. Use Node.js 20 on Linux, macOS or Windows x64/arm64.`,
    );
  }
  // uWS writes `uWebSockets: 20` on every response unless its undocumented `_cfg` switch is given
  // the key 'silent' (uNetworking/uWebSockets.js#1048; the maintainers otherwise suggest removing
  // it in a proxy). The server's make and version are nobody's business, and a function answering
  // with a Response fetched from islet sent the header twice.
  uws._cfg?.('silent');
  return uws;
}
