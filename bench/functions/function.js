// The functions the benchmark deploys (node8).
exports.hello = (body, context) => `Hello ${(context.request.query.name || body.name || 'World').toUpperCase()}!`;

exports.post = (body) => ({ items: Array.isArray(body.items) ? body.items.length : 0, id: body.id });

exports.spin = () => {
  for (;;) {}
};
