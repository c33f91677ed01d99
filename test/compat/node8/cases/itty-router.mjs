import { AutoRouter } from 'itty-router';

const router = AutoRouter();
router.get('/', (request) => ({ hello: 'itty', query: request.query.name ?? null }));
router.get('/items/:id', ({ params }) => ({ id: params.id }));

export default router;
