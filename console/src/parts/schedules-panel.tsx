import { accountPath, api, type Session } from '../api';
import { formatDateSeconds } from '../format';
import { useLoad } from '../use-load';
import { ErrorNote } from './feedback';

/** One schedule as GET /v2/accounts/<account>/schedules describes it (engine/jobs/background.ts). */
interface ScheduleInfo {
  function: string;
  cron: string;
  timezone: string;
  next?: string;
  last?: { scheduledTime: string; finishedAt?: string; status?: number; errorCode?: string };
}

/** How the last run ended: its status (and error code), "running", or "–" before the first. */
function outcome(s: ScheduleInfo): string {
  if (!s.last) return '–';
  if (s.last.status === undefined) return 'running';
  return s.last.errorCode ? `${s.last.status} ${s.last.errorCode}` : String(s.last.status);
}

/**
 * The function's schedules (service.yml `schedule:`), each with its next tick and its last run and
 * how that ended; read again every 5 s. Nothing is shown for a function without a schedule.
 */
export function SchedulesPanel({ session, name }: { session: Session; name: string }) {
  const list = useLoad(() => api<{ schedules: ScheduleInfo[] }>(session.key, 'GET', accountPath(session, `/schedules?function=${encodeURIComponent(name)}`)), [session.key, name], 5000);
  const schedules = list.data?.schedules ?? [];
  if (schedules.length === 0 && !list.error) return null;
  return (
    <section aria-labelledby="schedules-title" class="card">
      <h2 id="schedules-title">Schedules</h2>
      <ErrorNote message={list.error?.message} />
      <table class="data" data-testid="schedules">
        <caption class="visually-hidden">Schedules of {name}</caption>
        <thead>
          <tr>
            <th scope="col">Schedule</th>
            <th scope="col">Time zone</th>
            <th scope="col">Next run</th>
            <th scope="col">Last run</th>
            <th scope="col">Outcome</th>
          </tr>
        </thead>
        <tbody>
          {schedules.map((s) => (
            <tr key={s.cron}>
              <td>
                <code>{s.cron}</code>
              </td>
              <td>{s.timezone}</td>
              <td>{s.next ? formatDateSeconds(s.next) : 'never'}</td>
              <td>{s.last ? formatDateSeconds(s.last.scheduledTime) : '–'}</td>
              <td data-testid="schedule-outcome">{outcome(s)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
