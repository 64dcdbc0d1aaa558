import type { Report } from '../../../shared/api';
import { translator } from '../../../shared/i18n';
import { stageName, statusText } from './words';

/** Table cells: pipes and line breaks would break the row. */
const cell = (s: unknown) =>
  String(s ?? '—')
    .replace(/\|/g, '\\|')
    .replace(/\r?\n/g, ' ');

const MAX_ROWS = 200;
const MARK: Record<string, string> = {
  pass: '✅',
  warn: '⚠️',
  fail: '❌',
  error: '❌',
  skip: '➖',
};

/** Markdown for a PR description or a wiki page; diffs as ```diff blocks. */
export function renderMarkdown(r: Report): string {
  const t = translator(r.language);
  const st = (s: string) => statusText(t, s);
  const out: string[] = [];
  const p = (s = '') => out.push(s);
  p(`# ${t('report.title')}: ${r.session.title}`);
  p();
  p(
    `${t('report.session')} #${r.session.id} · ${t('report.project')}: ${r.session.project ?? t('report.adHoc')}${r.session.codeCommit ? ` · git \`${r.session.codeCommit.slice(0, 12)}\`` : ''} · ${t('report.generated', { at: r.generatedAt, tool: r.generator.name, version: r.generator.version })}`,
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
      `| ${cell(stageName(r, s.stage))} | ${MARK[s.status] ?? ''} ${cell(st(s.status))} | ${cell(s.hosts.map((h) => `${h.host}: ${st(h.status)}`).join(', ') || '—')} |`,
    );
  p();
  p(`### ${t('report.blocking')}`);
  p();
  if (!r.summary.blocking.length) p(t('report.nothingBlocks'));
  for (const b of r.summary.blocking)
    p(`- \`${b.check}\` @ ${b.host} (${stageName(r, b.stage)}): **${b.title}** — ${b.summary}`);
  p();
  p(`### ${t('report.waivers')}`);
  p();
  if (!r.summary.waivers.length) p(t('report.noWaivers'));
  for (const w of r.summary.waivers)
    p(
      `- \`${w.check}\` @ ${w.host}: ${t('report.waivedBy', { by: w.by, at: w.at, reason: w.reason })}`,
    );
  if (r.changes) {
    p();
    p(`### ${t('report.changes', { id: r.changes.previousSessionId })}`);
    p();
    if (!r.changes.improved.length && !r.changes.regressed.length) p(t('report.noChanges'));
    for (const [label, rows] of [
      [t('report.improved'), r.changes.improved],
      [t('report.regressed'), r.changes.regressed],
    ] as const)
      for (const x of rows)
        p(`- ${label}: \`${x.check}\` @ ${x.host} (${x.from ?? '—'} → ${x.to ?? '—'})`);
  }
  if (r.inventories.length) {
    p();
    p(`## ${t('report.inventories')}`);
    p();
    p('| host | chip | chips | health | CANN | driver | firmware | python | torch | torch_npu |');
    p('|---|---|---|---|---|---|---|---|---|---|');
    for (const i of r.inventories) {
      const v = (k: keyof typeof i) => `${cell(i[k])}${i.differs.includes(String(k)) ? ' ⚠️' : ''}`;
      p(
        `| ${cell(i.host)} | ${v('chip')} | ${v('chipCount')} | ${v('health')} | ${v('cann')} | ${v('driver')} | ${v('firmware')} | ${v('python')} | ${v('torch')} | ${v('torchNpu')} |`,
      );
    }
  }
  p();
  p(`## ${t('report.checks')}`);
  for (const s of r.stages) {
    p();
    p(`### ${stageName(r, s.stage)} @ ${s.host}: ${st(s.status)}`);
    p();
    p(`| ${t('report.check')} | ${t('report.status')} | ${t('report.message')} |`);
    p('|---|---|---|');
    for (const c of s.checks)
      p(
        `| \`${c.id}\` ${cell(c.title)} | ${MARK[c.status] ?? ''} ${st(c.status)} | ${cell(c.summary)}${c.remediation && c.status !== 'pass' ? ` — ${cell(c.remediation)}` : ''}${c.waiver ? ` (${cell(t('report.waivedBy', { by: c.waiver.by, at: c.waiver.at, reason: c.waiver.reason }))})` : ''} |`,
      );
  }
  if (r.code) {
    const c = r.code;
    p();
    p(`## ${t('report.code')}`);
    p();
    p(
      t('report.codeSummary', {
        scanId: c.scanId,
        root: c.root,
        mode: c.mode,
        files: c.files,
        lines: c.lines,
        error: c.counts.error,
        warning: c.counts.warning,
        info: c.counts.info,
        level: c.effort.level,
      }),
    );
    p();
    p(`| ${t('report.file')} | ${t('report.rule')} | ${t('report.message')} |`);
    p('|---|---|---|');
    for (const f of c.findings.slice(0, MAX_ROWS))
      p(`| \`${f.file}:${f.line}\` | ${f.severity} \`${f.ruleId}\` | ${cell(f.message)} |`);
    if (c.findings.length > MAX_ROWS)
      p(`\n_${t('report.truncated', { shown: MAX_ROWS, total: c.findings.length })}_`);
    p();
    p(`### ${t('report.diffs')}`);
    p();
    const accepted = c.diffs.filter((d) => d.patch);
    if (!accepted.length) p(t('report.noDiffs'));
    for (const d of accepted) {
      p(`\`${d.file}\` — ${t(`code.review.${d.applied ? 'applied' : d.review}`)}`);
      p();
      p('```diff');
      p(d.patch.replace(/\n$/, ''));
      p('```');
      p();
    }
  }
  for (const o of r.ops) {
    p();
    p(`## ${t('report.ops')}`);
    p();
    p(
      t('report.opsSummary', {
        host: o.host,
        entry: o.entry,
        version: o.targetTorchNpu,
        list: o.opList,
      }),
    );
    p();
    if (o.error) {
      p(`❌ ${o.error}`);
      continue;
    }
    p(
      `${t('ops.class.direct')} **${o.breakdown.direct}** · ${t('ops.class.needs-change')} **${o.breakdown.needsChange}** · ${t('ops.class.cpu-fallback')} **${o.breakdown.cpuFallback}** · ${t('ops.class.unsupported')} **${o.breakdown.unsupported}**`,
    );
    const rows = o.ops.filter((x) => x.class !== 'direct' || x.dynamic);
    if (rows.length) {
      p();
      p(
        `| ${t('report.op')} | ${t('report.calls')} | ${t('report.class')} | ${t('report.where')} |`,
      );
      p('|---|---|---|---|');
      for (const x of rows.slice(0, MAX_ROWS))
        p(
          `| \`${x.op}\` | ${x.count} | ${t(`ops.class.${x.class}`)}${x.dynamic ? ` (${t('ops.dynamic')})` : ''} | ${cell(x.where ?? '')} |`,
        );
    }
  }
  p();
  p(`## ${t('report.review')}`);
  p();
  if (!r.review.comments.length) p(t('report.noComments'));
  for (const c of r.review.comments) p(`- \`${c.target}\` — **${c.author}** (${c.at}): ${c.text}`);
  for (const d of r.review.decisions)
    p(
      `- ${t(`report.decision.${d.decision}`)}: **${d.by}** (${d.at})${d.note ? `: ${d.note}` : ''}`,
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
  return out.join('\n');
}
