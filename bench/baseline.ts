/**
 * The baseline: a bare uWebSockets.js server in the same Node, running the same handlers in-process
 * (no isolate, no store), with the same per-request work islet does around them (route, key check
 * by SHA-256 in constant time, query parse, JSON body parse, request id, both X-Service-* headers).
 * It is the ceiling that shows what the sandbox and the service cost. Prints `{url}` when ready.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { loadUws } from '../http/uws';
import { newRequestId } from '../engine/request-id';

const KEY_DIGEST = createHash('sha256')
  .update(process.env.BENCH_KEY ?? 'key')
  .digest();

type Handler = (body: Record<string, unknown>, context: { request: { query: Record<string, string> } }) => unknown;
const handlers: Record<string, Handler> = {
  hello: (body, context) => `Hello ${String(context.request.query.name || body.name || 'World').toUpperCase()}!`,
  post: (body) => ({ items: Array.isArray(body.items) ? body.items.length : 0, id: body.id }),
};

function parseQuery(raw: string): Record<string, string> {
  const query: Record<string, string> = {};
  for (const part of raw.split('&')) {
    if (!part) continue;
    const eq = part.indexOf('=');
    query[decodeURIComponent(eq < 0 ? part : part.slice(0, eq))] = eq < 0 ? '' : decodeURIComponent(part.slice(eq + 1));
  }
  return query;
}

const uws = loadUws();
uws
  .App()
  // The bare relay (bench/io.ts): each chunk of the request's body written back as it comes (uWS
  // holds what the client has not taken yet; pausing the socket would stop its sends too).
  .post('/relay', (res) => {
    let aborted = false;
    res.onAborted(() => (aborted = true));
    res.cork(() => res.writeStatus('200 OK').writeHeader('content-type', 'application/octet-stream'));
    res.onData((chunk, last) => {
      if (aborted) return;
      res.cork(() => {
        res.write(chunk);
        if (last) res.end();
      });
    });
  })
  // The bare WebSocket echo (bench/io.ts).
  .ws('/echo', { message: (ws, message, isBinary) => void ws.send(message, isBinary) })
  .any('/v2/run/*', (res, req) => {
    const name = req.getUrl().split('/')[4] ?? '';
    const key = req.getHeader('x-service-api-key');
    const query = parseQuery(req.getQuery() ?? '');
    const state = { aborted: false };
    res.onAborted(() => (state.aborted = true));
    const chunks: Buffer[] = [];
    const finish = () => {
      if (state.aborted) return;
      const authorized = timingSafeEqual(createHash('sha256').update(key).digest(), KEY_DIGEST);
      const handler = handlers[name] as Handler | undefined;
      const started = process.hrtime.bigint();
      let body: Record<string, unknown> = {};
      try {
        body = chunks.length ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>) : {};
      } catch {
        body = {};
      }
      const out = authorized && handler ? JSON.stringify(handler(body, { request: { query } })) : '{"errorCode":"ERR_BAD_KEY"}';
      const duration = (Number(process.hrtime.bigint() - started) / 1000).toFixed(3);
      res.cork(() => {
        res.writeStatus(authorized && handler ? '200 OK' : '403 Forbidden');
        res.writeHeader('content-type', 'application/json');
        res.writeHeader('X-Service-Request-ID', newRequestId());
        res.writeHeader('X-Service-Duration-Usecs', duration);
        res.end(out);
      });
    };
    if (req.getHeader('content-length') && req.getHeader('content-length') !== '0') {
      res.onData((chunk, last) => {
        chunks.push(Buffer.from(new Uint8Array(chunk)));
        if (last) finish();
      });
    } else finish();
  })
  .listen('127.0.0.1', 0, (socket) => {
    if (!socket) process.exit(1);
    process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${uws.us_socket_local_port(socket)}` })}\n`);
  });
