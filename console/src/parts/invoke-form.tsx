import { useState } from 'preact/hooks';
import { invokeFunction, type Session } from '../api';
import { formatBytes, formatMs, showBytes } from '../format';
import { ErrorNote } from './feedback';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'];

interface Result {
  status: number;
  statusText: string;
  headers: [string, string][];
  body: string;
  bytes: number;
  json: boolean;
  /** X-Service-Duration-Usecs: the server's own time for the call. */
  serverUs: number | undefined;
  roundTripMs: number;
}

/** `Name: value` lines as headers; a line without a colon is an error naming its number. */
export function parseHeaderLines(text: string): Record<string, string> {
  const headers: Record<string, string> = {};
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (!line) return;
    const colon = line.indexOf(':');
    if (colon <= 0) throw new Error(`Headers, line ${i + 1}: expected "Name: value"`);
    headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  });
  return headers;
}

/**
 * The path and query as a browser would send them (percent-encoded), kept below the function:
 * `/../x` stays `/x`, as it would in a URL of the function's.
 */
export function requestTarget(path: string, query: string): { path: string; query: string } {
  const cleanPath = path.trim() === '' || path.trim() === '/' ? '' : `/${path.trim().replace(/^\/+/, '')}`;
  const cleanQuery = query.trim().replace(/^\?/, '');
  const url = new URL(`${cleanPath || '/'}${cleanQuery ? `?${cleanQuery}` : ''}`, 'http://function.invalid');
  return { path: url.pathname, query: url.search.slice(1) };
}

/** Calls the function through the console's port and shows everything it answered, as text. */
export function InvokeForm({ session, name, isPublic }: { session: Session; name: string; isPublic: boolean }) {
  const [method, setMethod] = useState('POST');
  const [path, setPath] = useState('/');
  const [query, setQuery] = useState('');
  const [headerText, setHeaderText] = useState('');
  const [bodyKind, setBodyKind] = useState<'json' | 'text'>('json');
  const [body, setBody] = useState('');
  const [sendKey, setSendKey] = useState(!isPublic);
  const [result, setResult] = useState<Result>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const noBody = method === 'GET' || method === 'HEAD';

  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    let headers: Record<string, string>;
    try {
      headers = parseHeaderLines(headerText);
      if (!noBody && body !== '' && bodyKind === 'json') {
        try {
          JSON.parse(body);
        } catch (err) {
          throw new Error(`The body is not valid JSON: ${(err as Error).message}`);
        }
        if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
      }
    } catch (err) {
      setError((err as Error).message);
      return;
    }
    if (sendKey) headers['X-Service-Api-Key'] = session.key;
    const target = requestTarget(path, query);
    setBusy(true);
    const started = performance.now();
    try {
      // Through the console's port, as data: a redirect is shown, not followed.
      const answer = await invokeFunction({
        account: session.accountId,
        function: name,
        method,
        path: target.path,
        query: target.query,
        headers,
        body: noBody ? new Uint8Array() : new TextEncoder().encode(body),
      });
      const roundTripMs = performance.now() - started;
      const header = (wanted: string) => answer.headers.find(([k]) => k === wanted)?.[1] ?? null;
      const shown = showBytes(answer.body, header('content-type'));
      const usecs = header('x-service-duration-usecs');
      setResult({
        status: answer.status,
        statusText: answer.statusText,
        headers: answer.headers,
        body: shown.text,
        bytes: answer.body.byteLength,
        json: shown.json,
        serverUs: usecs === null ? undefined : Number(usecs),
        roundTripMs,
      });
    } catch (err) {
      setResult(undefined);
      setError(`The call did not complete: ${(err as Error).message}`);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="invoke-title" class="card">
      <h2 id="invoke-title">Invoke</h2>
      <form class="invoke" onSubmit={submit}>
        <div class="row">
          <label>
            Method
            <select name="method" value={method} onChange={(e) => setMethod(e.currentTarget.value)}>
              {METHODS.map((m) => (
                <option value={m}>{m}</option>
              ))}
            </select>
          </label>
          <label class="grow">
            Path
            <input name="path" value={path} onInput={(e) => setPath(e.currentTarget.value)} spellcheck={false} />
          </label>
          <label class="grow">
            Query
            <input name="query" value={query} placeholder="name=Ada&amp;lang=en" onInput={(e) => setQuery(e.currentTarget.value)} spellcheck={false} />
          </label>
        </div>
        <label>
          <span>
            Headers <span class="hint">one "Name: value" a line</span>
          </span>
          <textarea name="headers" rows={2} value={headerText} onInput={(e) => setHeaderText(e.currentTarget.value)} spellcheck={false} />
        </label>
        <fieldset disabled={noBody}>
          <legend>Body{noBody ? ` (none with ${method})` : ''}</legend>
          <label class="choice">
            <input type="radio" name="body-kind" checked={bodyKind === 'json'} onChange={() => setBodyKind('json')} /> JSON
          </label>
          <label class="choice">
            <input type="radio" name="body-kind" checked={bodyKind === 'text'} onChange={() => setBodyKind('text')} /> Text
          </label>
          <textarea name="body" aria-label="Body" rows={4} value={body} onInput={(e) => setBody(e.currentTarget.value)} spellcheck={false} placeholder={bodyKind === 'json' ? '{"name": "Ada"}' : ''} />
        </fieldset>
        <div class="row">
          <label class="choice">
            <input type="checkbox" name="send-key" checked={sendKey} onChange={(e) => setSendKey(e.currentTarget.checked)} /> Send my key
          </label>
          <button type="submit" disabled={busy}>
            {busy ? 'Calling…' : 'Invoke'}
          </button>
        </div>
      </form>
      <ErrorNote message={error} />
      <div aria-live="polite">{result && <InvokeResult result={result} />}</div>
    </section>
  );
}

function InvokeResult({ result }: { result: Result }) {
  const ok = result.status < 400;
  return (
    <div class="result" data-testid="invoke-result">
      <p class="status-line">
        <span class={`status ${ok ? 'ok' : 'bad'}`} data-testid="invoke-status">
          {result.status} {result.statusText}
        </span>
        <span class="hint">
          {result.serverUs !== undefined && `server ${formatMs(result.serverUs / 1000)} · `}round trip {formatMs(result.roundTripMs)} · {formatBytes(result.bytes)}
        </span>
      </p>
      <details open>
        <summary>Headers ({result.headers.length})</summary>
        <table class="headers">
          <tbody>
            {result.headers.map(([k, v]) => (
              <tr class={k.startsWith('x-service-') ? 'service' : undefined}>
                <th scope="row">{k}</th>
                <td>{v}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
      <h3 class="visually-hidden">Body</h3>
      <pre class="body" data-testid="invoke-body" tabIndex={0} aria-label={result.json ? 'Body (JSON, pretty-printed)' : 'Body'}>
        {result.body === '' ? '(empty body)' : result.body}
      </pre>
    </div>
  );
}
