import { nanoid, customAlphabet } from 'nanoid';

export function handler() {
  const id = nanoid();
  const digits = customAlphabet('0123456789', 12)();
  return { length: id.length, urlSafe: /^[A-Za-z0-9_-]+$/.test(id), digits: /^\d{12}$/.test(digits) };
}
