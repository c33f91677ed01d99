/**
 * The operation between the Python runtime's time-zone files (python/sandbox/index.ts mounts them
 * read-only under /usr/share/zoneinfo) and tzdata's host half (host.ts).
 */
import { labelled, object, string } from '../schema';

export const TZDATA_OPS = {
  /** One file of the system's IANA database by key (`Europe/Paris`), answered as bytes; '' lists `[key, size]` of them all as JSON. */
  tzdata: object({ key: labelled('key', string()) }),
};
