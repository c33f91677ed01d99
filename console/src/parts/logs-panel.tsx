import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { LogEntry, Session } from '../api';
import { stackBelow } from '../../../engine/log-text';
import { formatTime } from '../format';
import { followLogs, type LiveState } from '../live-logs';

/** Lines kept in the page; older ones are let go. */
const KEEP = 1_000;

/** Severity of each level, as the server ranks them (call lines rank with info). */
const SEVERITY: Record<string, number> = { debug: 10, log: 20, info: 20, call: 20, warn: 30, error: 40 };

const FILTERS = [
  { value: '0', label: 'All levels' },
  { value: '20', label: 'Info and above' },
  { value: '30', label: 'Warnings and errors' },
  { value: '40', label: 'Errors only' },
];

interface Line extends LogEntry {
  /** A number of its own, for Preact's keys. */
  seq: number;
}

/** Live logs of one function: a level filter, call lines on or off, pause, and every line shown as text. */
export function LogsPanel({ session, name }: { session: Session; name: string }) {
  const [lines, setLines] = useState<Line[]>([]);
  const [state, setState] = useState<LiveState>({ kind: 'connecting' });
  const [minLevel, setMinLevel] = useState('0');
  const [showCalls, setShowCalls] = useState(true);
  const [paused, setPaused] = useState(false);
  const [skipped, setSkipped] = useState({ count: 0, uncounted: false });
  /** Lines that arrived while paused, shown on resume. */
  const held = useRef<Line[]>([]);
  const [heldCount, setHeldCount] = useState(0);
  const pausedRef = useRef(false);
  const seq = useRef(0);

  useEffect(() => {
    setLines([]);
    held.current = [];
    return followLogs(session, name, {
      onEntries: (entries) => {
        const incoming = entries.map((e) => ({ ...e, seq: seq.current++ }));
        if (pausedRef.current) {
          held.current = [...held.current, ...incoming].slice(-KEEP);
          setHeldCount(held.current.length);
        } else {
          setLines((old) => [...old, ...incoming].slice(-KEEP));
        }
      },
      onDropped: (count) => setSkipped((s) => (count === null ? { ...s, uncounted: true } : { ...s, count: s.count + count })),
      onState: setState,
    });
  }, [session.key, name]);

  const togglePause = () => {
    const next = !paused;
    pausedRef.current = next;
    setPaused(next);
    if (!next && held.current.length) {
      const release = held.current;
      held.current = [];
      setHeldCount(0);
      setLines((old) => [...old, ...release].slice(-KEEP));
    }
  };

  const min = Number(minLevel);
  const visible = lines.filter((l) => (SEVERITY[l.level] ?? 20) >= min && (showCalls || l.level !== 'call'));

  // Follows the newest line unless the reader has scrolled up.
  const list = useRef<HTMLOListElement>(null);
  const atBottom = useRef(true);
  useLayoutEffect(() => {
    const el = list.current;
    if (el && atBottom.current) el.scrollTop = el.scrollHeight;
  }, [visible.length]);

  return (
    <section aria-labelledby="logs-title" class="card">
      <div class="title-row">
        <h2 id="logs-title">Live logs</h2>
        <span class={`live live-${state.kind}`} role="status" data-testid="logs-state">
          {describeState(state)}
        </span>
      </div>
      <div class="row controls">
        <label>
          Level
          <select name="level" value={minLevel} onChange={(e) => setMinLevel(e.currentTarget.value)}>
            {FILTERS.map((f) => (
              <option value={f.value}>{f.label}</option>
            ))}
          </select>
        </label>
        <label class="choice">
          <input type="checkbox" name="show-calls" checked={showCalls} onChange={(e) => setShowCalls(e.currentTarget.checked)} /> Call lines
        </label>
        <button type="button" aria-pressed={paused} onClick={togglePause}>
          {paused ? `Resume${heldCount ? ` (${heldCount} new)` : ''}` : 'Pause'}
        </button>
        <button type="button" class="quiet" onClick={() => setLines([])}>
          Clear
        </button>
        {(skipped.count > 0 || skipped.uncounted) && (
          <span class="hint" role="status">
            {skipped.uncounted ? 'Some lines were written faster than they could be followed and are not shown.' : `${skipped.count} lines skipped while the page fell behind.`}
          </span>
        )}
      </div>
      <ol
        class="logs"
        ref={list}
        data-testid="logs"
        tabIndex={0}
        aria-label={`Log lines of ${name}`}
        onScroll={(e) => {
          const el = e.currentTarget;
          atBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
        }}
      >
        {visible.length === 0 && <li class="empty">{lines.length === 0 ? 'No log lines yet. Lines appear here as the function writes them.' : 'No line matches the filter.'}</li>}
        {visible.map((l) => (
          <li key={l.seq} class={`level-${l.level}`}>
            <time dateTime={new Date(l.t).toISOString()}>{formatTime(l.t)}</time>
            <span class="level">{l.level}</span>
            <span class="rid" title={l.requestId ? `request ${l.requestId}` : undefined}>
              {l.requestId ? l.requestId.slice(-8) : '-'}
            </span>
            <span class="msg">
              {l.code ? `${l.code} ` : ''}
              {l.message}
              {l.stack ? `\n${stackBelow(l.message, l.stack)}` : ''}
            </span>
          </li>
        ))}
      </ol>
    </section>
  );
}

function describeState(state: LiveState): string {
  switch (state.kind) {
    case 'connecting':
      return 'Connecting…';
    case 'live':
      return 'Live';
    case 'retrying':
      return `Reconnecting (${state.reason})`;
    case 'ended':
      return `Stopped: ${state.reason}`;
  }
}
