// node8's `url` (WHATWG URL, the legacy url.parse/format/resolve, fileURLToPath and friends),
// `querystring` and `punycode`, from unenv; URL and URLSearchParams are the globals.
import punycodeModule from 'unenv/node/punycode';
import querystringModule from 'unenv/node/querystring';
import * as legacy from 'unenv/node/url';

const g = globalThis as unknown as Record<string, unknown>;
const url: Record<string, unknown> = { ...legacy };
delete url.default;
for (const name of ['URL', 'URLSearchParams']) Object.defineProperty(url, name, { enumerable: true, get: () => g[name] });

export default url;
export const querystring = querystringModule;
export const punycode = punycodeModule;
