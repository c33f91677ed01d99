const { z } = require('zod');

const User = z.object({ name: z.string().min(2), age: z.number().int().positive(), email: z.string().email().optional() });

exports.handler = () => {
  const ok = User.safeParse({ name: 'Ada', age: 36 });
  const bad = User.safeParse({ name: 'A', age: -1, email: 'nope' });
  return { ok: ok.success, data: ok.data, issues: bad.error.issues.map((i) => `${i.path.join('.')}:${i.code}`).sort() };
};
