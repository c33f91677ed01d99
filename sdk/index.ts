/**
 * The islet client for host programs: `invoke(accountId, functionName, apiKey, body)`.
 * Inside node8 functions the same call is `require('sdk').invoke(...)`, served in-process.
 */
export interface InvokeResult {
  statusCode: number;
  /** Lower-case header names, as received (X-Service-Request-ID and X-Service-Duration-Usecs included). */
  headers: Record<string, string>;
  /** The response body as text (for JSON responses, the JSON itself: parse it). */
  body: string;
}

export interface InvokeOptions {
  /** Base URL of the islet server; defaults to $SERVICE_URL, then http://127.0.0.1:8080. */
  url?: string;
  method?: string;
  query?: Record<string, string>;
}

/** POSTs `body` (a JSON string; other values are JSON-encoded) to the function and returns its response. */
export async function invoke(accountId: string, functionName: string, apiKey: string | undefined, body?: unknown, options: InvokeOptions = {}): Promise<InvokeResult> {
  const base = (options.url ?? process.env.SERVICE_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
  const query = options.query ? `?${new URLSearchParams(options.query).toString()}` : '';
  const url = `${base}/v2/run/${encodeURIComponent(accountId)}/${encodeURIComponent(functionName)}${query}`;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (apiKey) headers['x-service-api-key'] = apiKey;
  const payload = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
  const method = options.method ?? 'POST';
  const response = await fetch(url, { method, headers, body: method === 'GET' || method === 'HEAD' ? undefined : payload });
  const responseHeaders: Record<string, string> = {};
  response.headers.forEach((value, name) => (responseHeaders[name] = value));
  return { statusCode: response.status, headers: responseHeaders, body: await response.text() };
}
