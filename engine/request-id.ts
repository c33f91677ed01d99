import { randomBytes } from 'node:crypto';

const prefix = randomBytes(8).toString('hex');
let counter = 0;

/** 32 lower-case hex characters, unique per request: a random per-process prefix and a counter. */
export function newRequestId(): string {
  counter = (counter + 1) % 0x1_0000_0000;
  const time = (Date.now() % 0x1_0000_0000).toString(16).padStart(8, '0');
  return prefix + time + counter.toString(16).padStart(8, '0');
}
