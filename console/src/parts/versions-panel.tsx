import { useState } from 'preact/hooks';
import { api, functionPath, type Session } from '../api';
import { formatBytes, formatDate } from '../format';
import { useLoad } from '../use-load';
import { Confirm } from './confirm';
import { DoneNote, ErrorNote, useAction } from './feedback';

export interface TrafficShare {
  version: number;
  percent: number;
}

interface VersionInfo {
  version: number;
  deployedAt: string;
  message?: string;
  contentHash: string;
  bytes: number;
  runtime: string;
  /** Its share of the calls (0 when it does not serve). */
  percent: number;
}

interface VersionList {
  latest: number;
  traffic: TrafficShare[];
  versions: VersionInfo[];
}

/** "v4 100%" or "v4 90% · v5 10%". */
export function describeSplit(traffic: TrafficShare[] | undefined): string {
  if (!traffic || traffic.length === 0) return '–';
  return traffic.map((s) => (traffic.length === 1 ? `v${s.version}` : `v${s.version} ${s.percent}%`)).join(' · ');
}

/**
 * The versions a function keeps, newest first, which serve and with what share; a rollback to any
 * of them, a split of the calls between two, and promotion of the newest. Each change is one
 * request, applied at once by the server (no upload, no rebuild).
 */
export function VersionsPanel({ session, name, onChange }: { session: Session; name: string; onChange: () => void }) {
  const list = useLoad(() => api<VersionList>(session.key, 'GET', functionPath(session, name, '/versions')), [session.key, name]);
  const [done, setDone] = useState<string>();
  const { busy, error, run } = useAction();

  const change = (what: string, method: string, rest: string, body?: unknown) =>
    run(async () => {
      setDone(undefined);
      const answer = await api<{ traffic: TrafficShare[] }>(session.key, method, functionPath(session, name, rest), body);
      setDone(`${what}: now serving ${describeSplit(answer.traffic)}.`);
      list.reload();
      onChange();
    });

  const data = list.data;
  return (
    <section aria-labelledby="versions-title" class="card">
      <div class="title-row">
        <h2 id="versions-title">Versions</h2>
        {data && <span class="hint">serving {describeSplit(data.traffic)}</span>}
      </div>
      <ErrorNote message={error ?? list.error?.message} />
      <DoneNote message={done} />
      {data && (
        <>
          <table class="data" data-testid="versions">
            <caption class="visually-hidden">Versions of {name}, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Version</th>
                <th scope="col">Deployed</th>
                <th scope="col">Message</th>
                <th scope="col">Code</th>
                <th scope="col" class="num">
                  Share
                </th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {data.versions.map((v) => (
                <tr key={v.version} class={v.percent > 0 ? 'serving' : undefined}>
                  <th scope="row">v{v.version}</th>
                  <td>{formatDate(v.deployedAt)}</td>
                  <td>{v.message ?? ''}</td>
                  <td>
                    <code title={v.contentHash}>{v.contentHash.slice(0, 10)}</code> <span class="hint">{formatBytes(v.bytes)}</span>
                  </td>
                  <td class="num">{v.percent > 0 ? `${v.percent}%` : ''}</td>
                  <td class="actions">{v.percent < 100 && <ServeAll version={v.version} back={v.version < Math.max(...data.traffic.map((t) => t.version))} busy={busy} onServe={change} />}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <SplitForm versions={data.versions.map((v) => v.version)} traffic={data.traffic} busy={busy} onSplit={(traffic) => change('Split set', 'PUT', '/traffic', { traffic })} />
          {data.traffic.length > 1 || data.traffic[0]?.version !== data.versions[0]?.version ? (
            <p>
              <button type="button" class="quiet" disabled={busy} onClick={() => change(`Promoted v${data.versions[0]!.version}`, 'POST', '/promote')}>
                Promote v{data.versions[0]?.version} (the newest) to all calls
              </button>
            </p>
          ) : null}
        </>
      )}
    </section>
  );
}

/** Every call to one version: a rollback (to an older one than serves) or a move forward. */
function ServeAll({ version, back, busy, onServe }: { version: number; back: boolean; busy: boolean; onServe: (what: string, method: string, rest: string, body: unknown) => void }) {
  return (
    <Confirm
      ask={`${back ? 'Roll back' : 'Serve'} to v${version}`}
      confirm={`Serve v${version} to all`}
      busy={busy}
      onConfirm={() => onServe(`${back ? 'Rolled back' : 'Moved'} to v${version}`, 'POST', '/rollback', { to: version })}
    />
  );
}

/** Sends a share of the calls to a second version: the first gets the rest. */
function SplitForm({ versions, traffic, busy, onSplit }: { versions: number[]; traffic: TrafficShare[]; busy: boolean; onSplit: (traffic: TrafficShare[]) => void }) {
  const [a, setA] = useState(String(traffic[0]?.version ?? versions[1] ?? versions[0] ?? ''));
  // The second defaults to the newest version other than the first.
  const [b, setB] = useState(String(traffic[1]?.version ?? versions.find((v) => String(v) !== a) ?? ''));
  const [percent, setPercent] = useState(String(traffic[1]?.percent ?? 10));
  const [problem, setProblem] = useState<string>();
  if (versions.length < 2) return null;
  const submit = (e: Event) => {
    e.preventDefault();
    const p = Number(percent);
    if (!Number.isInteger(p) || p < 0 || p > 100) return setProblem('The share is a whole number from 0 to 100.');
    if (a === b) return setProblem('Choose two different versions.');
    setProblem(undefined);
    onSplit(
      p === 0
        ? [{ version: Number(a), percent: 100 }]
        : p === 100
          ? [{ version: Number(b), percent: 100 }]
          : [
              { version: Number(a), percent: 100 - p },
              { version: Number(b), percent: p },
            ],
    );
  };
  const options = versions.map((v) => <option value={String(v)}>v{v}</option>);
  return (
    <form class="split row" onSubmit={submit} aria-label="Traffic split">
      <label>
        Serve
        <select name="split-a" value={a} onChange={(e) => setA(e.currentTarget.value)}>
          {options}
        </select>
      </label>
      <label>
        and send
        <input name="split-percent" type="number" min={0} max={100} step={1} value={percent} onInput={(e) => setPercent(e.currentTarget.value)} class="narrow" />
      </label>
      <label>
        % of calls to
        <select name="split-b" value={b} onChange={(e) => setB(e.currentTarget.value)}>
          {options}
        </select>
      </label>
      <button type="submit" disabled={busy}>
        Set split
      </button>
      <ErrorNote message={problem} />
    </form>
  );
}
