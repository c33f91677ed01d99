import pLimit from 'p-limit';

export async function handler() {
  const limit = pLimit(2);
  let running = 0;
  let most = 0;
  const task = (n) => limit(async () => {
    running++;
    most = Math.max(most, running);
    await new Promise((r) => setTimeout(r, 5));
    running--;
    return n * 2;
  });
  const results = await Promise.all([1, 2, 3, 4, 5].map(task));
  return { results, most };
}
