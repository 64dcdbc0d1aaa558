import type { CheckStatus, SessionRecord, StageStatus } from '../../../../shared/api';

/** The colour class of a check or stage status. */
export const statusClass = (s: StageStatus | CheckStatus | null | undefined): string =>
  s === 'pass'
    ? 'ok'
    : s === 'warn' || s === 'skip'
      ? 'warn'
      : s === 'fail' || s === 'error'
        ? 'fail'
        : 'muted';

const WORST_FIRST: StageStatus[] = [
  'fail',
  'error',
  'interrupted',
  'cancelled',
  'warn',
  'running',
  'pass',
];

/** The worst status of a session's runs, whatever the stage (null: nothing run yet). */
export function overallStatus(s: SessionRecord): StageStatus | null {
  for (const st of WORST_FIRST) if (s.runs.some((r) => r.status === st)) return st;
  return null;
}
