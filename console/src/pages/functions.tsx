import { useState } from 'preact/hooks';
import { accountPath, api, type FunctionInfo, type Session } from '../api';
import { formatCount, formatDate, formatMs } from '../format';
import { useHourFigures, type HourFigures } from '../list-stats';
import { describeSplit } from '../parts/versions-panel';
import { SortableTable, type Column } from '../parts/sortable-table';
import { href } from '../router';
import { useLoad } from '../use-load';
import { ErrorNote } from '../parts/feedback';

/** The list's columns; the hour's figures come from each function's stats. */
function columns(figures: Map<string, HourFigures>): Column<FunctionInfo>[] {
  const hour = (f: FunctionInfo) => figures.get(f.name);
  return [
    { key: 'name', label: 'Name', sortValue: (f) => f.name, render: (f) => <a href={href({ page: 'function', name: f.name })}>{f.name}</a> },
    { key: 'runtime', label: 'Runtime', sortValue: (f) => f.runtime, render: (f) => f.runtime },
    { key: 'serving', label: 'Serving', sortValue: (f) => f.traffic?.[0]?.version ?? f.version, render: (f) => (f.traffic ? describeSplit(f.traffic) : <code>{shortVersion(f.version)}</code>) },
    { key: 'access', label: 'Access', sortValue: (f) => (f.public ? 'public' : 'key'), render: (f) => (f.public ? 'public' : 'key') },
    { key: 'calls', label: 'Calls (1 h)', numeric: true, sortValue: (f) => hour(f)?.calls, render: (f) => figure(hour(f)?.calls) },
    { key: 'errors', label: 'Errors (1 h)', numeric: true, sortValue: (f) => hour(f)?.errors, render: (f) => figure(hour(f)?.errors) },
    { key: 'p99', label: 'p99 (1 h)', numeric: true, sortValue: (f) => hour(f)?.p99Ms ?? undefined, render: (f) => formatMs(hour(f)?.p99Ms) },
    { key: 'deployed', label: 'Deployed', sortValue: (f) => f.deployedAt, render: (f) => formatDate(f.deployedAt) },
  ];
}

function figure(n: number | undefined): string {
  return n === undefined ? '–' : formatCount(n);
}

export function shortVersion(version: string | number): string {
  return typeof version === 'number' ? String(version) : version.slice(0, 12);
}

export function FunctionsPage({ session }: { session: Session }) {
  return session.scope === 'invoke' ? <CallByName /> : <FunctionList session={session} />;
}

function FunctionList({ session }: { session: Session }) {
  const list = useLoad(() => api<{ functions: FunctionInfo[] }>(session.key, 'GET', accountPath(session, '/functions')), [session.key]);
  const figures = useHourFigures(
    session,
    list.data?.functions.map((f) => f.name),
  );
  return (
    <section aria-labelledby="functions-title">
      <div class="title-row">
        <h1 id="functions-title">Functions</h1>
        <button type="button" class="quiet" onClick={list.reload} disabled={list.loading}>
          Refresh
        </button>
      </div>
      <ErrorNote message={list.error?.message} />
      {list.data && list.data.functions.length === 0 && (
        <p>
          No functions yet. Deploy one with <code>islet deploy &lt;name&gt;</code>.
        </p>
      )}
      {list.data && list.data.functions.length > 0 && (
        <SortableTable caption="Functions of this account" columns={columns(figures)} rows={list.data.functions} rowKey={(f) => f.name} initialSort="name" />
      )}
    </section>
  );
}

/** An invoke key cannot list functions: it names the one to call. */
function CallByName() {
  const [name, setName] = useState('');
  return (
    <section aria-labelledby="call-title">
      <h1 id="call-title">Call a function</h1>
      <form
        class="inline"
        onSubmit={(e) => {
          e.preventDefault();
          if (name.trim()) location.hash = href({ page: 'function', name: name.trim() });
        }}
      >
        <label>
          Function name
          <input value={name} onInput={(e) => setName(e.currentTarget.value)} spellcheck={false} required />
        </label>
        <button type="submit">Open</button>
      </form>
    </section>
  );
}
