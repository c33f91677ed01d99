import { Hono } from 'hono';

const app = new Hono();
app.get('/', (c) => c.json({ hello: 'hono', query: c.req.query('name') ?? null }));
app.post('/items/:id', async (c) => c.json({ id: c.req.param('id'), body: await c.req.json() }, 201));
app.notFound((c) => c.text('no such route', 404));

export default app;
