/** How the management API shows a key and a version: pure functions of their records, shared by the engine and http/. */
import type { FunctionManifest } from './manifest';
import type { ApiKeyRecord, TrafficShare } from './store/store';
import type { KeyDescription } from './wire';

/** A key as listings show it (never the key, nor its digest). */
export function describeKey(k: ApiKeyRecord, lastUsedAt = k.lastUsedAt): KeyDescription {
  return { id: k.id, name: k.name, scope: k.scope, createdAt: k.createdAt, lastUsedAt: lastUsedAt ?? null, ...(k.revokedAt ? { revokedAt: k.revokedAt } : {}) };
}

/** A version as listings show it, with its share of the calls (0 when it does not serve). */
export function describeVersion(m: FunctionManifest, traffic: TrafficShare[]) {
  return {
    version: m.version,
    deployedAt: m.deployedAt,
    message: m.message,
    contentHash: m.contentHash,
    bytes: m.bytes,
    runtime: m.runtime,
    percent: traffic.find((s) => s.version === m.version)?.percent ?? 0,
  };
}
