import type { Capability } from '../capability';

export const events = {
  name: 'events',
  summary: "Event, EventTarget, DOMException and AbortController (event-target-shim), and Node's events",
  runtimes: ['node8'],
  libraries: { 'web/events': 'guest/events.ts', 'node/events': 'guest/node-events.ts' },
  modules: { events: 'node/events' },
  globals: {
    Event: 'web/events',
    EventTarget: 'web/events',
    CustomEvent: 'web/events',
    DOMException: 'web/events',
    AbortController: 'web/events',
    AbortSignal: 'web/events',
    addEventListener: 'web/events',
    removeEventListener: 'web/events',
    dispatchEvent: 'web/events',
  },
  tests: ['test/runtime/node8-web.test.ts', 'test/runtime/node8-builtins.test.ts'],
} as const satisfies Capability;
