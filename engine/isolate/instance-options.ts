import type { InstanceServices } from '../runtime';
import type { SocketLimits } from '../capabilities/sockets/limits';
import type { WebSocketLimits } from '../capabilities/websockets/limits';
import type { IsolateInstance } from './instance';

export interface IsolateInstanceOptions {
  timeoutMs: number;
  responseBodyBytes: number;
  /**
   * The sandbox reads a request body still arriving (node8: the body's id in place of its bytes),
   * whole up to `requestBodyBytes`. Without it, the engine hands every call its body whole.
   */
  readsBodyStreams?: { requestBodyBytes: number };
  services: InstanceServices;
  /** Where the version's files are: read by the sandbox's `fs` and `require`, moved by `relocate`. */
  files?: { codeDir: string };
  /** Reads one of the version's files for `require` (relative path, already checked to exist). */
  readModule?(path: string): string | undefined;
  /** Turns positions in built code back into the user's files (stacks of failed calls). */
  mapStack?(stack: string): string;
  /**
   * Called once when the instance dies (memory limit, timeout, disposal); `catastrophic` when V8
   * parked its thread after a fatal out-of-memory (the process should be replaced).
   */
  onDeath(instance: IsolateInstance, catastrophic: boolean): void;
  /** Dispose at once on any timeout (an interpreter stopped mid-way cannot be trusted again). */
  disposeOnTimeout?: boolean;
  /** The bounds of the function's WebSockets (default WEBSOCKET_LIMITS). */
  webSockets?: WebSocketLimits;
  /** The bounds of the function's TCP sockets (default SOCKET_LIMITS). */
  sockets?: SocketLimits;
  /**
   * Called after 64, 256, 1,024… calls (four times more each time): an isolate's memory grows with
   * use (young-generation pages touched, optimised code), so the warm cache's figure is measured again.
   */
  remeasure?(instance: IsolateInstance): void;
}
