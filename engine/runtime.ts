import type { ServiceError } from './errors';
import type { FunctionManifest } from './manifest';

/** One invocation as a runtime sees it (already authenticated and routed). */
export interface CallInput {
  requestId: string;
  method: string;
  /** The part of the URL path after the function name; `/` when none. */
  path: string;
  /** The raw query string, without `?`. */
  rawQuery: string;
  /** Lower-case names; repeated headers joined with `, `. */
  headers: Record<string, string>;
  body: Buffer;
}

export interface FunctionResponse {
  status: number;
  headers: Record<string, string>;
  body: string | Uint8Array;
}

export type CallOutcome = { ok: true; response: FunctionResponse } | { ok: false; error: ServiceError };

export type InstanceState = 'ready' | 'retired' | 'dead';

/** A warm, loaded function version that can take calls. */
export interface Instance {
  readonly state: InstanceState;
  /** Calls running now. */
  readonly inflight: number;
  /** Memory this instance is estimated to hold, in MB (the warm cache's size unit). */
  readonly sizeMb: number;
  call(input: CallInput): Promise<CallOutcome>;
  /** Takes no new calls; disposed once the running ones finish. */
  retire(): void;
  /** Stops at once; running calls fail. */
  dispose(): void;
}

/** What a running function may ask of the service (the sandbox's only way out). */
export interface InstanceServices {
  log(requestId: string, level: string, text: string): void;
  fetch(request: string, body: Uint8Array | undefined): Promise<{ payload: string; body: Uint8Array | undefined }>;
  /** In-process `sdk.invoke`; resolves to the JSON of `{statusCode, headers, body}`. */
  invoke(request: string): Promise<string>;
}

export interface Runtime {
  /** Loads a version into a fresh instance. Throws ERR_FUNCTION_FAILED when its code cannot load. */
  createInstance(manifest: FunctionManifest, codeDir: string, services: InstanceServices): Promise<Instance>;
  /** Deploy-time check of unpacked code; throws ERR_INVALID_FUNCTION naming file and line. */
  validate(manifest: FunctionManifest, codeDir: string, services: InstanceServices): Promise<void>;
  /** Releases what the runtime holds besides instances (spare isolates). */
  close?(): void;
}
