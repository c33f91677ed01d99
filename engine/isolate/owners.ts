import type { EgressBodies } from '../capabilities/fetch/bodies';
import type { InstanceConnections } from '../capabilities/sockets/connections';
import type { SlotMap } from '../slot-map';
import type { RunningCall } from './call-batches';

/** `waitUntil` windows one instance may have open at once; more do not keep it awake. */
const MAX_WINDOWS = 1024;

/**
 * The requests that own an instance's TCP sockets and unread fetch bodies, which close when their
 * owner is over: a call in flight, its `waitUntil` work (a window, open until its work is done or a
 * timeout passed), or the module's code while it loads (request ''). Windows also keep the
 * instance awake.
 */
export class RequestOwners {
  /** Open `waitUntil` windows by the sandbox's token, each closed at the latest a timeout after it opened. */
  private readonly windows = new Map<number, NodeJS.Timeout>();
  /** The request each open window is the work of. */
  private readonly windowOwners = new Map<number, string>();
  /** Loads of the code in progress. */
  loads = 0;

  constructor(
    private readonly running: SlotMap<RunningCall>,
    private readonly connections: InstanceConnections,
    private readonly bodies: EgressBodies,
    private readonly dead: () => boolean,
  ) {}

  /** Opens window `token` of `requestId`, closed by `expire` a timeout later; false when it is open already or too many are. */
  openWindow(token: number, requestId: string, timeoutMs: number, expire: () => void): boolean {
    if (this.windows.has(token) || this.windows.size >= MAX_WINDOWS) return false;
    this.windows.set(token, setTimeout(expire, timeoutMs).unref());
    this.windowOwners.set(token, requestId);
    return true;
  }

  /** Closes window `token`: true when it was open (its owner's sockets close unless the owner still runs). */
  closeWindow(token: number): boolean {
    const timer = this.windows.get(token);
    if (timer === undefined) return false;
    clearTimeout(timer);
    this.windows.delete(token);
    const owner = this.windowOwners.get(token);
    this.windowOwners.delete(token);
    if (owner !== undefined) this.over(owner);
    return true;
  }

  clearWindows(): void {
    for (const timer of this.windows.values()) clearTimeout(timer);
    this.windows.clear();
    this.windowOwners.clear();
  }

  /**
   * Whether request `requestId` still runs here: its call is in flight, or its `waitUntil` work
   * goes on ('' is the module's code while it loads). Asked only when a socket opens or the
   * owner of a socket or body may be over, so the call path keeps no table of request ids.
   */
  runs(requestId: string): boolean {
    if (this.dead()) return false;
    if (requestId === '') return this.loads > 0;
    if (requestId.length !== 32) return false;
    for (const owner of this.windowOwners.values()) if (owner === requestId) return true;
    for (const id of this.running.ids()) if (this.running.get(id)!.meta.startsWith(requestId, 2)) return true;
    return false;
  }

  /** Whether anything is owned: only then is a request's end looked into. */
  get holding(): boolean {
    return this.connections.size > 0 || this.bodies.size > 0;
  }

  /** A call, a window or the load is over: the sockets and bodies of its request close unless it still runs. */
  over(requestId: string): void {
    if (!this.holding || this.runs(requestId)) return;
    this.connections.ownerEnded(requestId);
    this.bodies.ownerEnded(requestId);
  }
}
