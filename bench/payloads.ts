/** The POST body of the bench and the soak: a JSON object of items, grown to just over 10 KB. */
export function tenKilobyteJson(): string {
  const items: { i: number; name: string; tags: string[] }[] = [];
  let text = '';
  while (text.length < 10 * 1024) {
    items.push({ i: items.length, name: `item-${items.length}`, tags: ['a', 'b'] });
    text = JSON.stringify({ id: 'bench', items });
  }
  return text;
}
