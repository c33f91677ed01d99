import { getQuery, getRouterParam, H3, readBody } from 'h3';

const app = new H3();
app.get('/', (event) => ({ hello: 'h3', query: getQuery(event).name ?? null }));
app.post('/items/:id', async (event) => {
  event.res.status = 201;
  return { id: getRouterParam(event, 'id'), body: await readBody(event) };
});

export default app;
