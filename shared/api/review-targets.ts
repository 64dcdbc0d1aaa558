import { ruleTitle, type Translate } from '../i18n';
import { LOCAL_HOST_NAME, LOCAL_TARGET } from './hosts';
import type { Report } from './reports';

/**
 * A host as people name it: a run on this machine is stored as `(local)` (a stage of the engine's
 * own) or under the built-in host `local`.
 */
export const hostWord = (t: Translate, host: string): string =>
  host === LOCAL_TARGET || host === LOCAL_HOST_NAME ? t('common.thisMachine') : host;

/** The stored form of what a review comment is about (ReportComment.target). */
export const checkTarget = (check: string, host: string): string => `check:${check}@${host}`;
export const findingTarget = (rule: string, file: string, line: number): string =>
  `finding:${rule}@${file}:${line}`;

/**
 * What a review comment is about, as a reader knows it: the check's title and host, or the
 * finding's place and rule title; the stored id only when the report no longer has what it
 * names.
 */
export function reviewTargetText(t: Translate, r: Pick<Report, 'stages'>, target: string): string {
  if (target === 'session') return t('reports.aboutSession');
  const check = /^check:(.+)@([^@]*)$/.exec(target);
  if (check) {
    const [, id, host] = check as unknown as [string, string, string];
    const title = r.stages.find((s) => s.host === host)?.checks.find((c) => c.id === id)?.title;
    return t('reports.aboutCheck', { title: title ?? id, host: hostWord(t, host) });
  }
  const finding = /^finding:(.+?)@(.+):(\d+)$/.exec(target);
  if (finding) {
    const [, rule, file, line] = finding as unknown as [string, string, string, string];
    // the rule by its title (its id is what the comment stores)
    return `${file}:${line} · ${ruleTitle(t, rule)}`;
  }
  return target;
}
