import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { EgressError } from '../engine/capabilities/fetch/egress';
import type { HostMemoryBudget } from '../engine/isolate/host-memory';
import type { InstanceServices } from '../engine/runtime';
import type { SyncOpKind } from '../engine/sandbox/protocol';

/** What one synchronous operation of the Python sandbox answers (see SyncOpResult in the protocol). */
export interface OpAnswer {
  payload: string;
  body?: Uint8Array | undefined;
}

/** A failure the sandbox turns into a Python exception by its code. */
export class OpError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The largest request body a Python function may send (net.py refuses larger ones before they leave). */
export const MAX_REQUEST_BODY = 32 * 1024 * 1024;

/** Where the IANA time-zone database is read from: the system's (Debian's tzdata package). */
export const ZONEINFO_DIR = process.env.TZDIR || '/usr/share/zoneinfo';
const ZONE_KEY = /^[A-Za-z0-9_+-]+(?:\/[A-Za-z0-9_+-]+){0,3}$/;
/** The database's text files that libraries read beside the zones (pytz reads tzdata.zi for its version). */
const ZONE_TEXTS = new Set(['tzdata.zi', 'zone.tab', 'zone1970.tab', 'iso3166.tab', 'leapseconds']);
const zones = new Map<string, Promise<Buffer | undefined>>();
let zoneList: Promise<[string, number][]> | undefined;

/** What the operations of one Python isolate may reach: its function, once it has one. */
export interface SyncOpScope {
  services: InstanceServices | undefined;
  /** The instance's host memory, which a response body being read counts against. */
  memory: HostMemoryBudget | undefined;
  /** The handler's timeout: no operation may last longer. */
  timeoutMs: number;
  /** The function's unpacked folder and the relative paths of its files. */
  codeDir: string | undefined;
  files: ReadonlySet<string>;
}

/**
 * The host's half of the Python sandbox's synchronous operations. Every argument is copied,
 * untrusted data from the sandbox.
 */
export function runSyncOp(kind: SyncOpKind, payload: string, body: Uint8Array | undefined, scope: SyncOpScope): Promise<OpAnswer> {
  const services = scope.services;
  if (!services && (kind === 'fetch' || kind === 'invoke')) return Promise.reject(new OpError('ERR_NOT_READY', 'the function is not loaded yet'));
  switch (kind) {
    case 'fetch':
      return fetchForPython(payload, body, services!, scope.timeoutMs, scope.memory);
    case 'invoke':
      return services!.invoke(payload).then((result) => ({ payload: result }));
    case 'file':
      return readFunctionFile(payload, scope);
    case 'pbkdf2':
    case 'scrypt':
      return services ? derive(kind, payload, body, services) : Promise.reject(new OpError('ERR_NOT_READY', 'the function is not loaded yet'));
    case 'tzdata':
      return readZone(payload);
    default:
      return Promise.reject(new OpError('ERR_UNKNOWN_OP', `unknown operation ${String(kind)}`));
  }
}

/**
 * One HTTP exchange of a Python socket, through the same egress as node8's fetch. Redirects come
 * back as they are (http.client does not follow them; urllib and requests do, and each hop comes
 * through here again and is checked again). The timeout is the socket's, never more than the
 * handler's.
 */
async function fetchForPython(payload: string, body: Uint8Array | undefined, services: InstanceServices, timeoutMs: number, memory: HostMemoryBudget | undefined): Promise<OpAnswer> {
  if (body && body.byteLength > MAX_REQUEST_BODY) throw new OpError('ERR_EGRESS_TOO_LARGE', `the request body is larger than ${MAX_REQUEST_BODY} bytes`);
  const request = JSON.parse(payload) as { url?: unknown; method?: unknown; headers?: unknown; timeoutMs?: unknown };
  const asked = typeof request.timeoutMs === 'number' && request.timeoutMs > 0 ? request.timeoutMs : timeoutMs;
  const forward = JSON.stringify({ url: request.url, method: request.method, headers: request.headers, redirect: 'manual', timeoutMs: Math.min(asked, timeoutMs) });
  try {
    const answer = await services.fetch(forward, body, memory);
    return { payload: answer.payload, body: answer.body };
  } catch (err) {
    if (err instanceof EgressError) throw new OpError(err.code, err.message);
    throw err;
  }
}

/** One of the function's own files, by the relative path the deploy listed; nothing else. */
async function readFunctionFile(payload: string, scope: SyncOpScope): Promise<OpAnswer> {
  const rel = String((JSON.parse(payload) as { path?: unknown }).path ?? '');
  if (!scope.codeDir || !scope.files.has(rel)) throw new OpError('ERR_NO_FILE', `no file ${JSON.stringify(rel)} in the function`);
  return { payload: '', body: await fsp.readFile(path.join(scope.codeDir, rel)) };
}

/**
 * A key derivation of hashlib, on a host-work thread (engine/host-work) under the limits node8's
 * crypto has too (engine/capabilities/crypto/hashlib.ts does the work). Failures keep their code: ERR_TOO_MUCH_WORK
 * makes the sandbox compute the derivation in the interpreter.
 */
async function derive(kind: 'pbkdf2' | 'scrypt', payload: string, body: Uint8Array | undefined, services: InstanceServices): Promise<OpAnswer> {
  try {
    const answer = await services.hostWork({ kind, payload, body: body ? body.slice().buffer : undefined });
    return { payload: answer.payload, body: answer.body ? new Uint8Array(answer.body) : undefined };
  } catch (err) {
    const e = err as Error & { code?: unknown };
    throw new OpError(typeof e.code === 'string' ? e.code : 'ERR_VALUE', e.message);
  }
}

/**
 * A file of the system's IANA database by key (`Europe/Paris`, or one of ZONE_TEXTS), read once and
 * kept; an empty key lists `[key, size]` of them all. Only names of that database are read, never
 * a path. The sandbox shows them as a read-only /usr/share/zoneinfo whose files load on first read.
 */
function readZone(payload: string): Promise<OpAnswer> {
  const key = String((JSON.parse(payload) as { key?: unknown }).key ?? '');
  if (key === '') {
    zoneList ??= listZones(ZONEINFO_DIR, '').then((keys) => keys.sort((a, b) => (a[0] < b[0] ? -1 : 1)));
    return zoneList.then((keys) => ({ payload: JSON.stringify(keys) }));
  }
  if (!(ZONE_KEY.test(key) || ZONE_TEXTS.has(key)) || key.length > 128) return Promise.reject(new OpError('ERR_NO_ZONE', `no time zone named ${JSON.stringify(key)}`));
  let file = zones.get(key);
  if (!file) {
    file = readZoneFile(path.join(ZONEINFO_DIR, key), ZONE_TEXTS.has(key));
    if (zones.size < 4096) zones.set(key, file);
  }
  return file.then((bytes) => {
    if (!bytes) throw new OpError('ERR_NO_ZONE', `no time zone named ${JSON.stringify(key)} in ${ZONEINFO_DIR}`);
    return { payload: '', body: bytes };
  });
}

async function readZoneFile(file: string, text: boolean): Promise<Buffer | undefined> {
  try {
    const bytes = await fsp.readFile(file);
    return bytes.length <= 1024 * 1024 && (text || bytes.subarray(0, 4).toString('latin1') === 'TZif') ? bytes : undefined;
  } catch {
    return undefined;
  }
}

/** `[key, size]` of the zones (TZif files) and ZONE_TEXTS under `root`; `posix/` and `right/` left out. */
async function listZones(root: string, prefix: string): Promise<[string, number][]> {
  let entries;
  try {
    entries = await fsp.readdir(path.join(root, prefix), { withFileTypes: true });
  } catch {
    return [];
  }
  const keys: [string, number][] = [];
  for (const entry of entries) {
    const key = prefix ? `${prefix}/${entry.name}` : entry.name;
    const texts = ZONE_TEXTS.has(key);
    if (!texts && (!ZONE_KEY.test(key) || key === 'localtime' || /^(posix|right)$/.test(key))) continue;
    // Debian links aliases (UTC, US/Eastern…) to their zone: follow links.
    const stat = entry.isSymbolicLink() ? await fsp.stat(path.join(root, key)).catch(() => undefined) : entry;
    if (stat?.isDirectory()) keys.push(...(await listZones(root, key)));
    else if (stat?.isFile()) {
      const bytes = await readZoneFile(path.join(root, key), texts);
      if (bytes) keys.push([key, bytes.length]);
    }
  }
  return keys;
}
