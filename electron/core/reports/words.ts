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
