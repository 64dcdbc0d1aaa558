import type { Report } from '../../../shared/api';
import type { Translate } from '../../../shared/i18n';
import { PRODUCT_NAME } from '../paths';
import { isWaived } from '../../../shared/api/stages';

/** A stage's name as the report has it (exports from before names were stored: its id). */
export function stageName(r: Report, id: string): string {
  return r.summary.stages.find((x) => x.stage === id)?.name ?? id;
}

/** The tool that wrote the report: ours by its name in the report's language, another as written. */
export function toolName(t: Translate, r: Report): string {
  return r.generator.name === PRODUCT_NAME ? t('app.name') : r.generator.name;
}

/**
 * The checks of a report by what they came to, in the order the summary shows them; a waived
 * failure is counted as waived, not as a failure (nor as gone).
 */
export function checkCounts(
  t: Translate,
  r: Report,
): { key: 'pass' | 'warn' | 'fail' | 'waived' | 'skip'; label: string; value: number }[] {
  const n = { pass: 0, warn: 0, fail: 0, waived: 0, skip: 0 };
  for (const st of r.stages)
    for (const c of st.checks)
      n[isWaived(c) ? 'waived' : c.status === 'error' ? 'fail' : c.status]++;
  return (['pass', 'warn', 'fail', 'waived', 'skip'] as const).map((key) => ({
    key,
    label: key === 'waived' ? t('report.waivedPart') : t(`sessions.status.${key}`),
    value: n[key],
  }));
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

/** A check that moved (improved or regressed): one line each. */
export interface MovedCheck {
  kind: 'regressed' | 'improved';
  check: string;
  host: string;
  from: string | null;
  to: string | null;
}
/** The checks one stage ran on one host in only one of the sessions: one line per stage. */
export interface ChecksOfStage {
  kind: 'added' | 'notRun';
  stage: string;
  host: string;
  titles: string[];
}

/**
 * What changed since the previous session, regressions first: each moved check on its own line,
 * checks run in only one session gathered by stage and host (a new stage brings a dozen; listed
 * one by one they buried the regressions).
 */
export function changeLines(c: NonNullable<Report['changes']>): (MovedCheck | ChecksOfStage)[] {
  const out: (MovedCheck | ChecksOfStage)[] = [];
  for (const kind of ['regressed', 'improved'] as const)
    for (const x of c[kind])
      out.push({ kind, check: x.check, host: x.host, from: x.from, to: x.to });
  for (const kind of ['added', 'notRun'] as const) {
    const groups = new Map<string, ChecksOfStage>();
    for (const x of c[kind] ?? []) {
      const key = `${x.stage}\u0000${x.host}`;
      const g = groups.get(key) ?? { kind, stage: x.stage, host: x.host, titles: [] };
      g.titles.push(x.title);
      groups.set(key, g);
    }
    out.push(...groups.values());
  }
  return out;
}
