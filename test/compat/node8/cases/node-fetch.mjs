import fetch from 'node-fetch';

export async function handler() {
  const res = await fetch(`${process.env.COMPAT_URL}/json?z=3`);
  const text = await (await fetch(`${process.env.COMPAT_URL}/text`)).text();
  return { ok: res.ok, data: await res.json(), text };
}
