import { requireAccount } from '../config';
import { CliError } from '../errors';

export interface InvokeOptions {
  data?: string;
  query?: string | string[];
  method?: string;
  path?: string;
  env?: NodeJS.ProcessEnv;
}

export function queryString(pairs: string | string[] | undefined): string {
  const list = pairs === undefined ? [] : Array.isArray(pairs) ? pairs : [pairs];
  const params = new URLSearchParams();
  for (const pair of list) {
    const eq = String(pair).indexOf('=');
    if (eq <= 0) throw new CliError(`--query ${pair}: expected key=value`);
    params.append(String(pair).slice(0, eq), String(pair).slice(eq + 1));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** `islet invoke <name>`: calls the function (POST by default) and returns its body. */
export async function invoke(name: string, options: InvokeOptions = {}): Promise<string> {
  const credentials = requireAccount(options.env ?? process.env);
  const method = (options.method ?? 'POST').toUpperCase();
  if (options.data !== undefined) {
    try {
      JSON.parse(options.data);
    } catch {
      throw new CliError(`--data is not valid JSON: ${options.data}`);
    }
  }
  const rest = options.path ? (options.path.startsWith('/') ? options.path : `/${options.path}`) : '';
  const url = `${credentials.url}/v2/run/${credentials.accountId}/${encodeURIComponent(name)}${rest}${queryString(options.query)}`;
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers: { 'X-Service-Api-Key': credentials.apiKey, 'Content-Type': 'application/json' },
      body: method === 'GET' || method === 'HEAD' ? undefined : options.data ?? '',
      redirect: 'manual',
    });
  } catch (err) {
    throw new CliError(`cannot reach the islet server at ${credentials.url}: ${((err as Error & { cause?: Error }).cause ?? (err as Error)).message}`);
  }
  const text = await response.text();
  if (response.status >= 400) {
    let reason = text;
    try {
      const body = JSON.parse(text) as { errorCode?: string; message?: string };
      if (body.errorCode) reason = `${body.errorCode}: ${body.message}`;
    } catch {
      // not an islet error body: show it as is
    }
    throw new CliError(`${response.status} ${reason}`);
  }
  const location = response.headers.get('location');
  return location && response.status >= 300 && response.status < 400 ? `${response.status} redirect to ${location}\n` : `${text}\n`;
}
