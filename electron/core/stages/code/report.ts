import type * as z from 'zod';
import type { ReportCode } from '../../../../shared/stages/code/report';
import { unifiedPatch } from '../../analyzer/fix';
import { diffBlock, esc, escText, MAX_ROWS, pill } from '../../reports/html-kit';
import {
  code,
  esc as escParams,
  fenceFor,
  mdText,
  MAX_ROWS as MD_ROWS,
} from '../../reports/md-kit';
import { printable } from '../../parsers/printable';
import type { StageReport } from '../define';
import { ruleTitle, type Translate } from '../../../../shared/i18n';

type Section = z.infer<typeof ReportCode>;

/** The code stage in a report: the newest scan, its findings, the reviewed diffs, the history. */
export const codeReport: StageReport<Section | null> = {
  build({ sessionId, services, show }) {
    const deps = services;
    // the newest code scan of the session, its reviewed diffs, and the history of counts
    const scans = deps.code.list(sessionId);
    let code: Section | null = null;
    if (scans.length) {
      const latest = deps.code.get(scans[0]!.id);
      const diffs = latest.fileList
        // a file the scan proposed changes to, or one edited by hand where it proposed none
        .filter((f) => f.hasText && (f.changed || f.review === 'edited'))
        .map((f) => {
          const content = deps.code.file(latest.id, f.file);
          const after =
            content.reviewed ?? (f.review === 'rejected' ? content.original : content.proposed);
          return {
            file: f.file,
            review: f.review,
            applied: !!f.appliedAt,
            ...(f.changes && f.changes.accepted < f.changes.total ? { partial: f.changes } : {}),
            patch:
              f.review === 'accepted' || f.review === 'edited'
                ? unifiedPatch(new Map([[f.file, { before: content.original, after }]]))
                : '',
          };
        });
      code = {
        scanId: latest.id,
        root: latest.root,
        mode: latest.mode,
        files: latest.files,
        lines: latest.lines,
        counts: latest.counts,
        effort: latest.effort,
        // each message in the report's language, from the keys the scan stored
        findings: latest.findings.map(({ fix: _fix, text, ...f }) => ({
          ...f,
          message: text ? show(text.message) : f.message,
        })),
        diffs,
        // the same folder's scans only: another folder's counts are no trend of this one
        history: scans
          .filter((x) => x.root === latest.root)
          .reverse()
          .map((x) => ({ scanId: x.id, at: x.createdAt, ...x.counts })),
      };
    }

    return code;
  },
  html(c, t) {
    if (!c) return '';
    const out: string[] = [];
    const h = (s: string) => out.push(s);
    h(`<section id="code"><h2>${esc(t('stage-code:report.title'))}</h2>`);
    h(`<p>${esc(t('stage-code:report.summary', summaryParams(c, t)))}</p>`);
    if (c.history.length > 1)
      h(
        `<p class="small">${esc(t('stage-code:report.history'))}${esc(t('common.colon'))}${c.history.map((x) => `#${x.scanId} ${x.error}/${x.warning}/${x.info}`).join(' → ')}</p>`,
      );
    h(
      `<h3>${esc(t('stage-code:report.findings'))}</h3><table><tr><th>${esc(t('stage-code:report.file'))}</th><th>${esc(t('stage-code:report.rule'))}</th><th>${esc(t('report.message'))}</th></tr>`,
    );
    for (const f of c.findings.slice(0, MAX_ROWS))
      h(
        `<tr><td><code>${esc(f.file)}:${f.line}:${f.column}</code></td><td>${pill(f.severity === 'info' ? 'skip' : f.severity === 'warning' ? 'warn' : 'fail', t(`code.severity.${f.severity}`))} ${esc(ruleTitle(t, f.ruleId))} <code>${esc(f.ruleId)}</code></td><td>${escText(f.message)}</td></tr>`,
      );
    h(`</table>`);
    if (c.findings.length > MAX_ROWS)
      h(
        `<p class="small muted">${esc(t('report.truncated', { shown: MAX_ROWS, total: c.findings.length }))}</p>`,
      );
    h(`<h3>${esc(t('stage-code:report.diffs'))}</h3>`);
    const accepted = c.diffs.filter((d) => d.patch);
    if (!accepted.length) h(`<p>${esc(t('stage-code:report.noDiffs'))}</p>`);
    for (const d of accepted)
      h(
        `<h4><code>${esc(d.file)}</code> ${pill(d.applied ? 'pass' : 'warn', reviewWords(t, d))}</h4>${diffBlock(d.patch)}`,
      );
    h(`</section>`);

    return out.join('');
  },
  md(c, t) {
    if (!c) return '';
    const out: string[] = [];
    const p = (s = '') => out.push(s);
    p();
    p(`## ${t('stage-code:report.title')}`);
    p();
    p(t('stage-code:report.summary', escParams(summaryParams(c, t))));
    p();
    p(
      `| ${t('stage-code:report.file')} | ${t('stage-code:report.rule')} | ${t('report.message')} |`,
    );
    p('|---|---|---|');
    for (const f of c.findings.slice(0, MD_ROWS))
      p(
        `| ${code(`${f.file}:${f.line}`)} | ${t(`code.severity.${f.severity}`)} ${mdText(ruleTitle(t, f.ruleId))} ${code(f.ruleId)} | ${mdText(f.message)} |`,
      );
    if (c.findings.length > MD_ROWS)
      p(`\n_${t('report.truncated', { shown: MD_ROWS, total: c.findings.length })}_`);
    p();
    p(`### ${t('stage-code:report.diffs')}`);
    p();
    const accepted = c.diffs.filter((d) => d.patch);
    if (!accepted.length) p(t('stage-code:report.noDiffs'));
    for (const d of accepted) {
      p(`${code(d.file)} — ${reviewWords(t, d)}`);
      p();
      const patch = printable(d.patch.replace(/\n$/, ''), { multiline: true });
      const fence = fenceFor(patch);
      p(`${fence}diff`);
      p(patch);
      p(fence);
      p();
    }
    return out.join('\n');
  },
};

/** The scan's summary sentence's parts, each count with its noun in the singular or plural. */
function summaryParams(c: Section, t: Translate) {
  return {
    scanId: c.scanId,
    root: c.root,
    // the fix mode in words (`改写`, not `rewrite`); an unknown one as stored
    mode: t(`code.modes.${c.mode}`, { defaultValue: c.mode }),
    files: t('code.n.pyFiles', { count: c.files }),
    lines: t('code.n.lines', { count: c.lines }),
    error: t('code.n.errors', { count: c.counts.error }),
    warning: t('code.n.warnings', { count: c.counts.warning }),
    info: t('code.n.notes', { count: c.counts.info }),
    level: t(`code.level.${c.effort.level}`),
  };
}

/** A file's review in words: applied, partly accepted (1 of 8 changes), or its decision. */
function reviewWords(
  t: Translate,
  d: { applied: boolean; review: string; partial?: { accepted: number; total: number } },
): string {
  if (d.applied) return t('code.review.applied');
  return d.partial ? t('code.review.partial', d.partial) : t(`code.review.${d.review}`);
}
