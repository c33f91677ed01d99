import type { ScheduleView } from '../../engine/jobs/background';
import { apiRequest } from '../api';
import { requireAccount } from '../config';
import { table } from '../table';

/** `islet schedules [--json]`: every schedule of the account, its next tick and how its last run went. */
export async function schedules(options: { json?: boolean } = {}, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const c = requireAccount(env);
  const { schedules: list } = await apiRequest<{ schedules: ScheduleView[] }>(c.url, 'GET', `/v2/accounts/${c.accountId}/schedules`, c.apiKey);
  if (options.json) return `${JSON.stringify(list, null, 2)}\n`;
  if (list.length === 0) return 'No schedules (a function gets one with "schedule:" in its service.yml)\n';
  const outcome = (s: ScheduleView) => (!s.last ? '-' : s.last.status === undefined ? 'running' : `${s.last.status}${s.last.errorCode ? ` ${s.last.errorCode}` : ''}`);
  return table([['FUNCTION', 'SCHEDULE', 'TIME ZONE', 'NEXT', 'LAST', 'OUTCOME'], ...list.map((s) => [s.function, s.cron, s.timezone, s.next ?? 'never', s.last?.scheduledTime ?? '-', outcome(s)])]);
}
