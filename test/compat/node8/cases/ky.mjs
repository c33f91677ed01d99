import ky from 'ky';

export async function handler() {
  const data = await ky.get(`${process.env.COMPAT_URL}/json`, { searchParams: { q: 'ky' } }).json();
  const echoed = await ky.post(`${process.env.COMPAT_URL}/echo`, { json: { from: 'ky' } }).json();
  return { data, echoed };
}
