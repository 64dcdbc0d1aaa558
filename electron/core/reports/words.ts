import type { Report } from '../../../shared/api';
import type { Translate } from '../../../shared/i18n';

/** A stage's name as the report has it (exports from before names were stored: its id). */
export function stageName(r: Report, id: string): string {
  return r.summary.stages.find((x) => x.stage === id)?.name ?? id;
}

/** A run's status in words, including a stage that did not run or that this build lacks. */
export function statusText(t: Translate, status: string): string {
  if (status === 'not-run') return t('report.notRun');
  if (status === 'not-built') return t('report.notBuilt');
  return t(`sessions.status.${status}`);
}

/**
 * A stored time (ISO 8601, UTC) as a reader takes it in: `2026-12-06 15:50 UTC`. In UTC, not the
 * exporter's zone, since a report is read by a team in several; anything else is shown as stored.
 */
export function timeText(iso: string): string {
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]00:?00)$/.exec(iso);
  return m ? `${m[1]} ${m[2]} UTC` : iso;
}
