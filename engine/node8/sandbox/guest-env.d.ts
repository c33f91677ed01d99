// The modules islet's node8 libraries are built from that ship no types (only what is used).
declare module 'events/' {
  const EventEmitter: new () => object;
  export default EventEmitter;
}
declare module 'util/' {
  export const types: Record<string, unknown>;
  const util: Record<string, unknown>;
  export default util;
}
declare module 'string_decoder/' {
  const decoder: Record<string, unknown>;
  export default decoder;
}
declare module 'readable-stream/lib/stream.js' {
  const stream: Record<string, unknown> & (new (...args: unknown[]) => object);
  export default stream;
}
declare module 'unenv/node/*' {
  const m: Record<string, unknown> & ((...args: unknown[]) => unknown);
  export default m;
}
declare module 'event-target-shim' {
  export class Event {
    constructor(type: string, init?: { bubbles?: boolean; cancelable?: boolean; composed?: boolean });
    readonly type: string;
  }
  export class EventTarget {
    addEventListener(type: string, listener: ((event: Event) => void) | null, options?: boolean | { once?: boolean; signal?: unknown }): void;
    removeEventListener(type: string, listener: ((event: Event) => void) | null): void;
    dispatchEvent(event: Event): boolean;
  }
  export function setErrorHandler(handler: ((error: unknown) => void) | undefined): void;
  export function setWarningHandler(handler: ((warning: unknown) => void) | undefined): void;
}
