import { getQuery, getRouterParam, H3, readBody } from 'h3';

const app = new H3();
app.get('/', (event) => ({ hello: 'h3', query: getQuery(event).name ?? null }));
app.post('/items/:id', async (event) => {
  event.res.status = 201;
  return { id: getRouterParam(event, 'id'), body: await readBody(event) };
});
// Its own 404 names the request's URL, whose host differs between islet and the Node control.
app.all('/**', (event) => {
  event.res.status = 404;
  return 'no such route';
});

export default app;
