/**
 * A MessageChannel whose messages arrive as microtasks, for Pyodide's event loop: it schedules
 * asyncio's ready callbacks through `port2.postMessage` when a MessageChannel exists, and through
 * setTimeout(0) otherwise, which here is a host timer (a millisecond or more for every step of a
 * coroutine). Messages carry no data across anything: both ports live in the same isolate.
 */
class MessagePort {
  onmessage: ((event: { data: unknown }) => void) | null = null;
  peer: MessagePort | undefined;

  postMessage(data: unknown): void {
    const peer = this.peer;
    void Promise.resolve().then(() => peer?.onmessage?.({ data }));
  }

  start(): void {}

  close(): void {
    this.peer = undefined;
  }
}

export class MessageChannel {
  readonly port1 = new MessagePort();
  readonly port2 = new MessagePort();

  constructor() {
    this.port1.peer = this.port2;
    this.port2.peer = this.port1;
  }
}
