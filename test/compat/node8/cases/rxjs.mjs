import { from, firstValueFrom, lastValueFrom, timer } from 'rxjs';
import { filter, map, toArray, take } from 'rxjs/operators';

export async function handler() {
  const evens = await firstValueFrom(from([1, 2, 3, 4, 5, 6]).pipe(filter((n) => n % 2 === 0), map((n) => n * 10), toArray()));
  const ticks = await lastValueFrom(timer(0, 5).pipe(take(3), toArray()));
  return { evens, ticks };
}
