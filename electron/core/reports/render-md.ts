import type { Report } from '../../../shared/api';
import { engineTranslator } from '../i18n';
import { INVENTORY_COLUMNS } from '../../../shared/api/hosts';
import { changeLines, checkCounts, stageName, statusText, timeText, toolName } from './words';
import { STAGE_DEFINITIONS } from '../stages/registry';
import { checkTarget, hostWord, reviewTargetText } from '../../../shared/api/review-targets';
import { cell, code, esc, md, mdText, tidyBlankLines } from './md-kit';
import { isWaived } from '../../../shared/api/stages';

const MARK: Record<string, string> = {
  pass: '✅',
  warn: '⚠️',
  fail: '❌',
  error: '❌',
  skip: '➖',
  waived: '🟣',
};
/** A status's mark and a space before its word; nothing for a status without one (not run). */
const mark = (status: string): string => (MARK[status] ? `${MARK[status]} ` : '');

/** Markdown for a PR description or a wiki page; diffs as ```diff blocks. */
export function renderMarkdown(r: Report): string {
  // the stages' own namespaces too: each stage's section renders its own keys
  const t = engineTranslator(r.language);
  const colon = t('common.colon');
  const paren = (text: string) => t('common.paren', { text });
  const host = (h: string) => hostWord(t, h);
  const about = (check: string, h: string) => reviewTargetText(t, r, checkTarget(check, h));
  const change = (x: { from: string | null; to: string | null }) =>
    `${x.from ? st(x.from) : '—'} → ${x.to ? st(x.to) : '—'}`;
  const st = (s: string) => statusText(t, s);
  const out: string[] = [];
  const p = (s = '') => out.push(s);
  p(`# ${t('report.title')}${colon}${md(r.session.title)}`);
  p();
  p(
    `${t('report.session')} #${r.session.id} · ${t('report.project')}${colon}${r.session.project ? md(r.session.project) : t('report.adHoc')}${r.session.codeCommit ? ` · git ${code(r.session.codeCommit.slice(0, 12))}` : ''} · ${t('report.generated', esc({ at: timeText(r.generatedAt), tool: toolName(t, r), version: r.generator.version }))}`,
  );
  if (r.namesHidden) p(`\n_${t('report.namesHidden')}_`);
  p();
  p(`**${t(`report.readiness.${r.summary.readiness}`)}**`);
  p();
  p(`## ${t('report.summary')}`);
  p();
  p(`| ${t('report.stage')} | ${t('report.status')} | ${t('report.hosts')} |`);
  p('|---|---|---|');
  for (const s of r.summary.stages)
    p(
      `| ${cell(stageName(r, s.stage))} | ${mark(s.status)}${st(s.status)} | ${cell(s.hosts.map((h) => `${host(h.host)}${colon}${st(h.status)}`).join(t('common.join.list')) || '—')} |`,
    );
  p();
  // the checks by what they came to, as the HTML report's bar shows them
  p(
    `${t('report.checks')}${colon}${checkCounts(t, r)
      .map((c) => `${mark(c.key)}${c.value} ${c.label}`)
      .join(' · ')}`,
  );
  p();
  p(`### ${t('report.blocking')}`);
  p();
  if (!r.summary.blocking.length) p(t('report.nothingBlocks'));
  for (const b of r.summary.blocking)
    p(
      `- **${md(b.title)}** — ${md(host(b.host))}${paren(md(stageName(r, b.stage)))}${colon}${mdText(b.summary)} ${code(b.check)}`,
    );
  p();
  p(`### ${t('report.waivers')}`);
  p();
  if (!r.summary.waivers.length) p(t('report.noWaivers'));
  for (const w of r.summary.waivers)
    p(
      `- ${md(about(w.check, w.host))}${colon}${t('report.waivedBy', esc({ by: w.by, at: timeText(w.at), reason: w.reason }))}`,
    );
  if (r.changes) {
    p();
    p(`### ${t('report.changes', { id: r.changes.previousSessionId })}`);
    p();
    const lines = changeLines(r.changes);
    if (!lines.length) p(t('report.noChanges'));
    for (const x of lines) {
      const label = t(`report.change.${x.kind}`);
      if ('check' in x) p(`- ${label}${colon}${md(about(x.check, x.host))}${paren(md(change(x)))}`);
      else
        p(
          `- ${label}${colon}${md(stageName(r, x.stage))} — ${md(host(x.host))}${colon}${md(x.titles.join(t('common.join.list')))}`,
        );
    }
  }
  if (r.inventories.length) {
    p();
    p(`## ${t('report.inventories')}`);
    p();
    p(
      `| ${t('report.hosts')} | ${INVENTORY_COLUMNS.map((c) => cell(t(`report.inventory.${c}`))).join(' | ')} |`,
    );
    p(`|---|${INVENTORY_COLUMNS.map(() => '---|').join('')}`);
    for (const i of r.inventories) {
      const v = (k: (typeof INVENTORY_COLUMNS)[number]) =>
        `${cell(i[k])}${i.differs.includes(k) ? ' ⚠️' : ''}`;
      p(`| ${cell(host(i.host))} | ${INVENTORY_COLUMNS.map(v).join(' | ')} |`);
    }
  }
  p();
  p(`## ${t('report.checks')}`);
  for (const s of r.stages) {
    p();
    p(`### ${cell(stageName(r, s.stage))} — ${md(host(s.host))}${colon}${st(s.status)}`);
    p();
    p(`| ${t('report.check')} | ${t('report.status')} | ${t('report.message')} |`);
    p('|---|---|---|');
    for (const c of s.checks)
      p(
        `| ${code(c.id)} ${cell(c.title)} | ${isWaived(c) ? `${mark('waived')}${t('sessions.waivedStatus', { status: st(c.status) })}` : `${mark(c.status)}${st(c.status)}`} | ${mdText(c.summary)}${c.remediation && c.status !== 'pass' ? ` — ${mdText(c.remediation)}` : ''}${c.waiver ? paren(t('report.waivedBy', esc({ by: c.waiver.by, at: timeText(c.waiver.at), reason: c.waiver.reason }))) : ''}${(c.diagnosis ?? []).map((d) => ` — ${t('report.diagnosis')}${colon}${cell(d.title)}${colon}${mdText(d.fix)}`).join('')} |`,
      );
  }
  // each stage's own section, in the stages' order, with its own namespace to word it in
  for (const d of STAGE_DEFINITIONS) {
    const section = d.report && (r as Record<string, unknown>)[d.shared.report!.key];
    if (d.report && section !== undefined && section !== null) p(d.report.md(section, t));
  }
  p();
  p(`## ${t('report.review')}`);
  p();
  p(`### ${t('report.comments')}`);
  p();
  if (!r.review.comments.length) p(t('report.noComments'));
  for (const c of r.review.comments)
    p(
      `- ${md(reviewTargetText(t, r, c.target))} — **${md(c.author)}**${paren(md(timeText(c.at)))}${colon}${md(c.text)}`,
    );
  p();
  p(`### ${t('report.decisions')}`);
  p();
  if (!r.review.decisions.length) p(t('report.noDecisions'));
  for (const d of r.review.decisions)
    p(
      `- ${t(`report.decision.${d.decision}`)}${colon}**${md(d.by)}**${paren(md(timeText(d.at)))}${d.note ? `${colon}${md(d.note)}` : ''}`,
    );
  p();
  p(`### ${t('report.signOff')}`);
  p();
  p(
    `| ${t('report.role')} | ${t('report.name')} | ${t('report.date')} | ${t('report.signature')} |`,
  );
  p('|---|---|---|---|');
  for (const role of ['porter', 'reviewer', 'owner']) p(`| ${t(`report.roles.${role}`)} | | | |`);
  p();
  return tidyBlankLines(out.join('\n'));
}
