import { timingSafeEqual } from 'node:crypto';

/** Whether an Authorization header carries the server's metrics token (compared in constant time). */
export function isMetricsToken(authorization: string, token: string | undefined): boolean {
  if (!token || !authorization.startsWith('Bearer ')) return false;
  const given = Buffer.from(authorization.slice(7));
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
