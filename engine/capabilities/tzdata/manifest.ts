import type { Capability } from '../capability';

export const tzdata = {
  name: 'tzdata',
  summary: "The system's IANA time-zone database, read-only under Python's /usr/share/zoneinfo, each file read on first use",
  runtimes: ['python'],
  ops: ['tzdata'],
  tests: ['test/runtime/python-stdlib.test.ts'],
} as const satisfies Capability;
