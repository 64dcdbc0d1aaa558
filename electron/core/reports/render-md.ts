import type { Report } from '../../../shared/api';
import { translator } from '../../../shared/i18n';
import { printable } from '../parsers/printable';

/**
 * Text that came from a host, a repository or a person (host names, npu-smi cells, file names,
 * messages, comments), made inert in Markdown: renderers pass inline HTML through, so `<`, `>`
 * and `&` become entities, Markdown punctuation is backslash-escaped (no links, images or
 * emphasis injected), control characters are shown as escapes and line breaks as spaces.
 */
export const md = (s: unknown): string =>
  printable(String(s ?? '—').replace(/\r?\n/g, ' '))
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/[\\`*_{}[\]()#+!|~]/g, '\\$&');

/** Table cells: the same, which also keeps pipes and line breaks from breaking the row. */
const cell = (s: unknown) => md(s);

/** A code span that the text cannot close: its fence is longer than any backtick run inside. */
export const code = (s: unknown): string => {
  const text = printable(String(s ?? '').replace(/\r?\n/g, ' '));
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((r) => r.length));
  const fence = '`'.repeat(longest + 1);
  const pad = text.startsWith('`') || text.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${text}${pad}${fence}`;
};

/** A fenced block whose fence no line of the content can match. */
const fenceFor = (text: string) =>
  '`'.repeat(Math.max(3, ...(text.match(/`+/g) ?? []).map((r) => r.length + 1)));

/** Interpolation values for t(): escaped like any other text. */
const esc = (params: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(
    Object.entries(params).map(([k, v]) => [k, typeof v === 'string' ? md(v) : v]),
  );

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
  const st = (s: string) => (s === 'not-run' ? t('report.notRun') : t(`sessions.status.${s}`));
  const out: string[] = [];
  const p = (s = '') => out.push(s);
  p(`# ${t('report.title')}: ${md(r.session.title)}`);
  p();
  p(
    `${t('report.session')} #${r.session.id} · ${t('report.project')}: ${r.session.project ? md(r.session.project) : t('report.adHoc')}${r.session.codeCommit ? ` · git ${code(r.session.codeCommit.slice(0, 12))}` : ''} · ${t('report.generated', esc({ at: r.generatedAt, tool: r.generator.name, version: r.generator.version }))}`,
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
      `| ${t(`sessions.stage.${s.stage}`)} | ${MARK[s.status] ?? ''} ${st(s.status)} | ${cell(s.hosts.map((h) => `${h.host}: ${st(h.status)}`).join(', ') || '—')} |`,
    );
  p();
  p(`### ${t('report.blocking')}`);
  p();
  if (!r.summary.blocking.length) p(t('report.nothingBlocks'));
  for (const b of r.summary.blocking)
    p(
      `- ${code(b.check)} @ ${md(b.host)} (${t(`sessions.stage.${b.stage}`)}): **${md(b.title)}** — ${md(b.summary)}`,
    );
  p();
  p(`### ${t('report.waivers')}`);
  p();
  if (!r.summary.waivers.length) p(t('report.noWaivers'));
  for (const w of r.summary.waivers)
    p(
      `- ${code(w.check)} @ ${md(w.host)}: ${t('report.waivedBy', esc({ by: w.by, at: w.at, reason: w.reason }))}`,
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
        p(
          `- ${label}: ${code(x.check)} @ ${md(x.host)} (${md(x.from ?? '—')} → ${md(x.to ?? '—')})`,
        );
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
    p(`### ${t(`sessions.stage.${s.stage}`)} @ ${md(s.host)}: ${st(s.status)}`);
    p();
    p(`| ${t('report.check')} | ${t('report.status')} | ${t('report.message')} |`);
    p('|---|---|---|');
    for (const c of s.checks)
      p(
        `| ${code(c.id)} ${cell(c.title)} | ${MARK[c.status] ?? ''} ${st(c.status)} | ${cell(c.summary)}${c.remediation && c.status !== 'pass' ? ` — ${cell(c.remediation)}` : ''}${c.waiver ? ` (${t('report.waivedBy', esc({ by: c.waiver.by, at: c.waiver.at, reason: c.waiver.reason }))})` : ''} |`,
      );
  }
  if (r.code) {
    const c = r.code;
    p();
    p(`## ${t('report.code')}`);
    p();
    p(
      t(
        'report.codeSummary',
        esc({
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
      ),
    );
    p();
    p(`| ${t('report.file')} | ${t('report.rule')} | ${t('report.message')} |`);
    p('|---|---|---|');
    for (const f of c.findings.slice(0, MAX_ROWS))
      p(
        `| ${code(`${f.file}:${f.line}`)} | ${f.severity} ${code(f.ruleId)} | ${cell(f.message)} |`,
      );
    if (c.findings.length > MAX_ROWS)
      p(`\n_${t('report.truncated', { shown: MAX_ROWS, total: c.findings.length })}_`);
    p();
    p(`### ${t('report.diffs')}`);
    p();
    const accepted = c.diffs.filter((d) => d.patch);
    if (!accepted.length) p(t('report.noDiffs'));
    for (const d of accepted) {
      p(`${code(d.file)} — ${t(`code.review.${d.applied ? 'applied' : d.review}`)}`);
      p();
      const patch = printable(d.patch.replace(/\n$/, ''), { multiline: true });
      const fence = fenceFor(patch);
      p(`${fence}diff`);
      p(patch);
      p(fence);
      p();
    }
  }
  for (const o of r.ops) {
    p();
    p(`## ${t('report.ops')}`);
    p();
    p(
      t(
        'report.opsSummary',
        esc({
          host: o.host,
          entry: o.entry,
          version: o.targetTorchNpu,
          list: o.opList,
        }),
      ),
    );
    p();
    if (o.error) {
      p(`❌ ${md(o.error)}`);
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
          `| ${code(x.op)} | ${x.count} | ${t(`ops.class.${x.class}`)}${x.dynamic ? ` (${t('ops.dynamic')})` : ''} | ${cell(x.where ?? '')} |`,
        );
    }
  }
  p();
  p(`## ${t('report.review')}`);
  p();
  if (!r.review.comments.length) p(t('report.noComments'));
  for (const c of r.review.comments)
    p(`- ${code(c.target)} — **${md(c.author)}** (${md(c.at)}): ${md(c.text)}`);
  for (const d of r.review.decisions)
    p(
      `- ${t(`report.decision.${d.decision}`)}: **${md(d.by)}** (${md(d.at)})${d.note ? `: ${md(d.note)}` : ''}`,
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
