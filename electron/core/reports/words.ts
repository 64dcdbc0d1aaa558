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

/** The kinds of change since the previous session, in the order a report lists them. */
export const CHANGE_KINDS = ['regressed', 'improved', 'added', 'notRun'] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];
/** Their colour classes in the HTML report. */
export const CHANGE_CLASS: Record<ChangeKind, string> = {
  regressed: 's-regressed',
  improved: 's-pass',
  added: 's-needs-change',
  notRun: 's-not-run',
};

/** Every check that changed since the previous session, labelled, regressions first. */
export function changeRows(
  c: NonNullable<Report['changes']>,
  t: Translate,
): {
  kind: ChangeKind;
  label: string;
  check: string;
  host: string;
  from: string | null;
  to: string | null;
}[] {
  return CHANGE_KINDS.flatMap((kind) =>
    (c[kind] ?? []).map((x) => ({
      kind,
      label: t(`report.change.${kind}`),
      check: x.check,
      host: x.host,
      from: 'from' in x ? x.from : null,
      to: 'to' in x ? x.to : null,
    })),
  );
}
