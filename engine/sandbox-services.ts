import { stripVTControlCharacters } from 'node:util';
import type { HostWorkPool } from './host-work/pool';
import { LogBudget } from './capabilities/console/log-budget';
import type { Egress } from './capabilities/fetch/egress';
import { socketService } from './capabilities/sockets/egress';
import type { InvokeRequest, WholeResponse } from './engine-types';
import { responseHeaders } from './error-answer';
import type { Limits } from './limits';
import type { LogStore } from './logs';
import type { FunctionManifest } from './manifest';
import { HEADER_LINES } from './response';
import type { InstanceServices } from './runtime';

/** What the sandbox services are made of: the engine's parts a function reaches from inside. */
export interface SandboxParts {
  limits: Limits;
  logs: LogStore;
  egress: Egress;
  hostWork: HostWorkPool;
  /** sdk.invoke's way back in: the invocation contract, its answer whole. */
  invoke(request: InvokeRequest): Promise<WholeResponse>;
}

/** Builds each instance's services (at its creation or a deploy's check, never per call). */
export class SandboxServices {
  /** Each account's share of the log text the server takes per second. */
  private readonly logBudget: LogBudget;

  constructor(private readonly parts: SandboxParts) {
    this.logBudget = new LogBudget(parts.limits.accountLogCharsPerSec, 4 * parts.limits.accountLogCharsPerSec);
  }

  /**
   * The capabilities a function's sandbox gets: its logs, guarded fetch, and sdk.invoke. Lines
   * written while the instance loads for a call's cold start (module code, Python's import-time
   * warnings) belong to no request in the sandbox: `attribution` gives them that call's id.
   */
  of(manifest: FunctionManifest, attribution?: { requestId: string | undefined }): InstanceServices {
    const logKey = `${manifest.account}/${manifest.name}`;
    const timeoutMs = manifest.timeoutMs ?? this.parts.limits.timeoutMs;
    return {
      hostWork: (task) => this.parts.hostWork.run(manifest.account, task, timeoutMs),
      log: (requestId, level, message) => {
        const id = requestId === '' && attribution?.requestId !== undefined ? attribution.requestId : requestId;
        // Colour codes (Hono's logger(), chalk) read as escapes in `islet logs` and boxes in the console: kept out of the logs.
        const text = message.includes('\x1b') || message.includes('\x9b') ? stripVTControlCharacters(message) : message;
        if (this.logBudget.take(manifest.account, text.length)) this.parts.logs.appendLine(logKey, JSON.stringify({ t: Date.now(), requestId: id, level, message: text }));
        else this.parts.logs.countDropped(logKey);
      },
      fetch: (request, body, budget, bodies) => this.parts.egress.fetch(request, body, budget, manifest.account, bodies),
      sockets: socketService(this.parts.egress, manifest.account),
      // sdk.invoke (engine/capabilities/invoke): a POST of the body as JSON.
      invoke: async (call) => {
        const res = await this.parts.invoke({
          accountId: call.accountId,
          functionName: call.functionName,
          apiKey: call.apiKey || undefined,
          method: 'POST',
          path: '/',
          rawQuery: '',
          headers: { 'content-type': 'application/json' },
          body: Buffer.from(call.body, 'utf8'),
        });
        const headers: Record<string, string> = {};
        // A Set-Cookie sent several times reads as fetch's Headers.get gives it: its values joined with `, `.
        for (const [name, value] of Object.entries(responseHeaders(res))) headers[name.toLowerCase()] = value.includes(HEADER_LINES) ? value.split(HEADER_LINES).join(', ') : value;
        const body = typeof res.body === 'string' ? res.body : Buffer.from(res.body).toString('utf8');
        return { statusCode: res.status, headers, body };
      },
    };
  }
}
