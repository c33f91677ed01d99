import superjson from 'superjson';

export function handler() {
  const { json, meta } = superjson.serialize({ when: new Date(0), set: new Set([1, 2]), big: 10n });
  const back = superjson.deserialize({ json, meta });
  return { json, meta, restored: [back.when instanceof Date, back.set instanceof Set, typeof back.big] };
}
