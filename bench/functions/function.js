// The functions the benchmark deploys (node8).
exports.hello = (body, context) => `Hello ${(context.request.query.name || body.name || 'World').toUpperCase()}!`;

exports.post = (body) => ({ items: Array.isArray(body.items) ? body.items.length : 0, id: body.id });

// About 2 ms of pure computation on the development machine: a fixed amount of work, not of time.
exports.crunch = () => {
  let x = 1;
  for (let i = 0; i < 1_200_000; i++) x = Math.imul(x ^ i, 0x9e3779b1) >>> 0;
  return x;
};

exports.spin = () => {
  for (;;) {}
};

exports.fails = () => {
  throw new Error('failing on purpose');
};

exports.hungry = () => {
  // About 40 MB of live objects per call: fine alone, over the limit when many overlap.
  const keep = [];
  for (let i = 0; i < 40; i++) keep.push(new Array(125_000).fill(i));
  return keep.length;
};

// Heavy host work within islet's limits, for the host-work neighbour scenario: brotli at its
// slowest quality of 512 KB, or PBKDF2 of 500,000 rounds, by turns.
// Loaded on its first call: every scenario's function shares this file, and 512 KB of noise made
// at load cost each cold start of hello 30 ms and each of its instances 1.4 MB more.
let heavyWork;
let turn = 0;
exports.heavy = () => {
  if (!heavyWork) {
    const crypto = require('crypto');
    const zlib = require('zlib');
    const noise = crypto.randomBytes(512 * 1024);
    heavyWork = [() => zlib.brotliCompressSync(noise).length, () => crypto.pbkdf2Sync('password', 'salt', 500_000, 32, 'sha256').length];
  }
  return heavyWork[turn++ % 2]();
};

// Streams and WebSockets (bench/io.ts), fetch style.
// One Server-Sent Event: as a stream (?mode=stream), or the same text as a whole answer.
exports.sse = {
  fetch(request) {
    const event = 'data: hello\n\n';
    const headers = { 'content-type': 'text/event-stream' };
    if (new URL(request.url).searchParams.get('mode') !== 'stream') return new Response(event, { headers });
    const bytes = new TextEncoder().encode(event);
    return new Response(new ReadableStream({ start: (c) => (c.enqueue(bytes), c.close()) }), { headers });
  },
};

// The request's body back as it comes.
exports.relay = { fetch: (request) => new Response(request.body, { headers: { 'content-type': 'application/octet-stream' } }) };

// request.json() of a large body: as post does with its parsed body.
exports.json = {
  async fetch(request) {
    const body = await request.json();
    return Response.json({ items: Array.isArray(body.items) ? body.items.length : 0, id: body.id });
  },
};

// Each WebSocket message back.
exports.wsEcho = {
  fetch() {
    const [client, server] = Object.values(new WebSocketPair());
    server.accept();
    server.addEventListener('message', (event) => server.send(event.data));
    return new Response(null, { status: 101, webSocket: client });
  },
};
