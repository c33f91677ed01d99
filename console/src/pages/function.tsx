import { api, functionPath, type FunctionInfo, type Session } from '../api';
import { formatBytes, formatDate } from '../format';
import { ErrorNote, NeedsAdmin } from '../parts/feedback';
import { InvokeForm } from '../parts/invoke-form';
import { LogsPanel } from '../parts/logs-panel';
import { MetricsPanel } from '../parts/metrics-panel';
import { SchedulesPanel } from '../parts/schedules-panel';
import { describeSplit, VersionsPanel } from '../parts/versions-panel';
import { href } from '../router';
import { useLoad } from '../use-load';
import { shortVersion } from './functions';

export function FunctionPage({ session, name }: { session: Session; name: string }) {
  const admin = session.scope === 'admin';
  return (
    <article aria-labelledby="function-title">
      <p class="crumbs">
        <a href={href({ page: 'functions' })}>Functions</a> /
      </p>
      <h1 id="function-title">{name}</h1>
      {admin ? (
        <AdminView session={session} name={name} />
      ) : (
        <>
          <InvokeForm session={session} name={name} isPublic={name.startsWith('public_')} />
          <NeedsAdmin what="This function's metrics, logs, versions and configuration" />
        </>
      )}
    </article>
  );
}

function AdminView({ session, name }: { session: Session; name: string }) {
  const info = useLoad(() => api<{ function: FunctionInfo }>(session.key, 'GET', functionPath(session, name)), [session.key, name]);
  const fn = info.data?.function;
  if (info.error && !fn) return <ErrorNote message={info.error.message} />;
  if (!fn) return <p class="hint">Loading…</p>;
  return (
    <>
      <p class="summary">
        {fn.runtime} · {fn.public ? 'public: callable without a key' : 'secured: callable with a key'} · serving{' '}
        <span data-testid="serving">{fn.traffic ? describeSplit(fn.traffic) : `v${shortVersion(fn.version)}`}</span> · deployed {formatDate(fn.deployedAt)}
      </p>
      <MetricsPanel session={session} name={name} />
      <div class="columns">
        <InvokeForm session={session} name={name} isPublic={fn.public} />
        <Config fn={fn} />
      </div>
      <SchedulesPanel session={session} name={name} />
      <LogsPanel session={session} name={name} />
      <VersionsPanel session={session} name={name} onChange={info.reload} />
    </>
  );
}

/**
 * How the entry is called: a handler with its arguments, or a module's `fetch` (a Workers-style
 * module, whose `entrypoint` is `handler` by default though no handler is called). Versions
 * deployed before islet kept the style show the export's name alone.
 */
export function entryCall(fn: Pick<FunctionInfo, 'entrypoint' | 'runtime' | 'style'>): string {
  if (fn.style === 'fetch') {
    const owner = fn.entrypoint === 'default' || fn.entrypoint === 'handler' ? 'the default export' : `export ${fn.entrypoint}`;
    return `fetch(request, env, ctx) of ${owner}`;
  }
  if (fn.style === 'handler') return `${fn.entrypoint}(body, ${fn.runtime.startsWith('python') ? 'req' : 'context'})`;
  return fn.entrypoint;
}

function Config({ fn }: { fn: FunctionInfo }) {
  return (
    <section aria-labelledby="config-title" class="card">
      <h2 id="config-title">Configuration</h2>
      <dl class="config">
        <dt>Runtime</dt>
        <dd>{fn.runtime}</dd>
        <dt>Entry</dt>
        <dd data-testid="entry">
          <code>{fn.file}</code> · <code>{entryCall(fn)}</code>
        </dd>
        <dt>Timeout</dt>
        <dd>{fn.timeoutMs ? `${fn.timeoutMs} ms` : 'server default'}</dd>
        <dt>Memory</dt>
        <dd>{fn.memoryMb ? `${fn.memoryMb} MB` : 'server default'}</dd>
        <dt>Code</dt>
        <dd>
          {fn.files} {fn.files === 1 ? 'file' : 'files'}, {formatBytes(fn.bytes)}
        </dd>
        <dt>Content hash</dt>
        <dd>
          <code title={fn.contentHash}>{fn.contentHash.slice(0, 16)}</code>
        </dd>
        <dt>Env</dt>
        <dd>
          {fn.env.length === 0 ? (
            'none'
          ) : (
            <ul class="env">
              {fn.env.map((e) => (
                <li>
                  <code>{e}</code>
                </li>
              ))}
            </ul>
          )}
          <span class="hint">names only: values never leave the server</span>
        </dd>
      </dl>
    </section>
  );
}
