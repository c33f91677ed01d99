import ivm from 'isolated-vm';
import { appendLog } from '../capabilities/console/host';
import type { OpAnswer } from '../capabilities/host-ops';
import { randomHex } from '../capabilities/subtle/host';
import { timerRequest } from '../capabilities/timers/host';
import type { TimerOpKind } from '../capabilities/timers/ops';
import { ENTRY_GLOBAL, HOST_GLOBAL } from '../sandbox/protocol';
import type { InstanceServices } from '../runtime';
import type { EgressBodies } from '../capabilities/fetch/bodies';
import type { InstanceConnections } from '../capabilities/sockets/connections';
import type { RequestBodies } from '../capabilities/request-body/host';
import type { HostMemory } from './host-memory';

/** What a bridge's callbacks reach: the instance the isolate became (none while it is blank). */
export interface BridgeTarget {
  readonly services: InstanceServices;
  /** Bytes the host holds for the instance outside its isolate (see host-memory.ts). */
  readonly hostMemory: HostMemory;
  /** Response bodies of its fetches still arriving (see capabilities/fetch/bodies.ts). */
  readonly egressBodies: EgressBodies;
  /** Its TCP sockets (see capabilities/sockets/connections.ts). */
  readonly connections: InstanceConnections;
  /** Request bodies its calls are still reading (see capabilities/request-body). */
  readonly requestBodies: RequestBodies;
  readModule(path: string): string | undefined;
  setTimer(op: TimerOpKind, id: number, ms: number): void;
  /** Starts an operation (unless too many are in flight) and answers the sandbox when it settles. */
  runOp(id: number, work: () => Promise<OpAnswer>): void;
  deliver(id: number, result: unknown): void;
  /** A response stream's chunk, end or failure (see HostBridge.chunk). */
  chunk(key: number, data: unknown, state: unknown, message: unknown): void;
  /** A WebSocket's accept, send or close (see HostBridge.socket). */
  socket(key: number, op: unknown, data: unknown, reason: unknown): void;
  /** Opens or closes a `waitUntil` window of request `requestId` (see HostBridge.background). */
  background(token: number, open: boolean, requestId: string): void;
  /** Sends calls one per entry from now on. */
  unbatch(): void;
  onCatastrophe(): void;
}

/** The late-bound end of an isolate's callbacks: set when a blank isolate becomes a function. */
export interface Bridge {
  target: BridgeTarget | undefined;
}

/** The entry points a runtime script leaves (see SandboxEntryPoints in the protocol). */
export interface EntryPoints {
  callRef: ivm.Reference<unknown>;
  fireRef: ivm.Reference<unknown>;
  initRef: ivm.Reference<unknown>;
}

/** An isolate with a runtime loaded and no function yet: `init` turns it into one. */
export interface BlankIsolate extends EntryPoints {
  isolate: ivm.Isolate;
  context: ivm.Context;
  memoryMb: number;
  bridge: Bridge;
}

/**
 * The callbacks every sandbox gets: log lines (console), timers, late results, `waitUntil` windows
 * (fetch) and random bytes (subtle), each answered by its capability's host half. Each copies its
 * arguments in and its result out; none hands the isolate a host object.
 */
export function commonCallbacks(bridge: Bridge): Record<string, ivm.Callback> {
  return {
    log: new ivm.Callback(
      (requestId: unknown, level: unknown, text: unknown) => {
        const target = bridge.target;
        if (target) appendLog(target.services, requestId, level, text);
      },
      { ignored: true },
    ),
    timer: new ivm.Callback((op: unknown, id: unknown, ms: unknown) => bridge.target?.setTimer(...timerRequest(op, id, ms)), { ignored: true }),
    deliver: new ivm.Callback((id: unknown, result: unknown) => bridge.target?.deliver(Number(id), result), { ignored: true }),
    chunk: new ivm.Callback((key: unknown, data: unknown, state: unknown, message: unknown) => bridge.target?.chunk(Number(key), data, state, message), { ignored: true }),
    background: new ivm.Callback(
      (token: unknown, open: unknown, requestId: unknown) => bridge.target?.background(Number(token), open === true, typeof requestId === 'string' ? requestId.slice(0, 64) : ''),
      { ignored: true },
    ),
    random: new ivm.Callback(randomHex),
  };
}

/**
 * Puts a runtime's host callbacks on HOST_GLOBAL, for the runtime script to take and delete before
 * any user code runs. The object has no prototype and is frozen: a member it lacks is never looked
 * up on Object.prototype (where user code could put a getter, which would be handed the object),
 * and nothing can be added to it or changed.
 */
export function installHostObject(isolate: ivm.Isolate, context: ivm.Context, members: Record<string, ivm.Callback | ivm.Reference<unknown>>): void {
  const host = isolate.compileScriptSync('Object.create(null)').runSync(context, { reference: true }) as ivm.Reference<Record<string, unknown>>;
  for (const [name, member] of Object.entries(members)) host.setSync(name, member);
  context.global.setSync(HOST_GLOBAL, host.derefInto());
  context.evalSync(`Object.freeze(globalThis.${HOST_GLOBAL})`);
}

/**
 * Takes the entry points the runtime left on ENTRY_GLOBAL and removes the runtime's globals. V8's
 * `gc` (engine/node-flags.ts) cannot be deleted (it is not configurable): it is left undefined.
 */
export function takeEntryPoints(context: ivm.Context): EntryPoints {
  const api = context.global.getSync(ENTRY_GLOBAL, { reference: true }) as ivm.Reference<Record<string, unknown>>;
  const refs = {
    callRef: api.getSync('call', { reference: true }) as ivm.Reference<unknown>,
    fireRef: api.getSync('fire', { reference: true }) as ivm.Reference<unknown>,
    initRef: api.getSync('init', { reference: true }) as ivm.Reference<unknown>,
  };
  context.evalSync(`delete globalThis.${ENTRY_GLOBAL}; delete globalThis.${HOST_GLOBAL}; globalThis.gc = undefined;`);
  return refs;
}
