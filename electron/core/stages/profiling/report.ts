import type * as z from 'zod';
import type {
  ReportProfiling,
  ReportProfilingCompare,
} from '../../../../shared/stages/profiling/report';
import { bar, esc, MAX_ROWS, pill } from '../../reports/html-kit';
import { cell, code, esc as mdParams, md, MAX_ROWS as MD_ROWS } from '../../reports/md-kit';
import type { StageReport } from '../define';
import { compareProfiles } from './compare';
import { ProfileRepository } from './repository';

type Section = z.infer<typeof ReportProfiling>[];
const SEV = { high: 'fail', medium: 'warn', low: 'skip' } as Record<string, string>;
const us = (x: number) => Math.round(x).toLocaleString('en-US');
const pc = (x: number) => `${(x * 100).toFixed(1)}%`;
const MAX_STEPS = 64;
const MAX_COMPARED_OPS = 20;
const CATEGORY: Record<string, string> = {
  computing: 'report.computing',
  communicationNotOverlapped: 'report.communication',
  free: 'report.free',
  bubble: 'report.bubble',
};
const ms = (x: number | null) => (x === null ? '—' : (x / 1000).toFixed(2));
const signed = (x: number | null) => (x === null ? '—' : `${x > 0 ? '+' : ''}${us(x)}`);

/** The newest stored profile of the session against the one before it, for the report. */
function comparison(
  repo: ProfileRepository,
  sessionId: number,
): { runId: number; c: z.infer<typeof ReportProfilingCompare> } | null {
  const [b, a] = repo.list(sessionId, 2).filter((p) => p.sessionId === sessionId);
  if (!a || !b) return null;
  try {
    const c = compareProfiles(repo.get(a.stageRunId), repo.get(b.stageRunId));
    // where the names map on both sides, the largest change (either way) first
    const mapped = (rows: typeof c.byOpType) =>
      rows
        .flatMap((r) =>
          r.aUs !== null && r.bUs !== null
            ? [{ name: r.name, aUs: r.aUs, bUs: r.bUs, ratio: r.ratio }]
            : [],
        )
        .sort((x, y) => Math.abs(y.bUs - y.aUs) - Math.abs(x.bUs - x.aUs))
        .slice(0, MAX_COMPARED_OPS);
    return {
      runId: b.stageRunId,
      c: {
        a: `#${a.stageRunId} ${c.a.source}`,
        b: `#${b.stageRunId} ${c.b.source}`,
        aStepUs: c.a.stepUs,
        bStepUs: c.b.stepUs,
        stepRatio: c.stepRatio,
        categories: c.categories,
        taskTypes: mapped(c.byTaskType),
        ops: mapped(c.byOpType),
        advice: { fixed: c.advice.fixed, added: c.advice.added },
      },
    };
  } catch {
    return null; // a profile that cannot be read any more: the sections still show the rest
  }
}

/** The profiling stage in a report: per stored profile, the breakdown, top kernels and advice. */
export const profilingReport: StageReport<Section> = {
  build({ runs, services, show, sessionId }) {
    const repo = new ProfileRepository(services.db, services.artifacts);
    const cmp = comparison(repo, sessionId);
    return runs
      .filter((r) => repo.has(r.id))
      .flatMap((r) => {
        try {
          const p = repo.get(r.id);
          return [
            {
              host: r.host,
              source: p.source,
              kind: p.kind,
              ranks: p.ranks.length,
              steps: p.steps.slice(0, MAX_STEPS).map((s) => ({
                rank: s.rank,
                step: s.step,
                computingUs: s.computingUs,
                communicationNotOverlappedUs: s.communicationNotOverlappedUs,
                overlappedUs: s.overlappedUs,
                freeUs: s.freeUs,
                bubbleUs: s.bubbleUs,
              })),
              taskTypes: Object.entries(p.kernels?.byTaskType ?? {}).map(([taskType, v]) => ({
                taskType,
                us: v.us,
                share: v.share,
              })),
              top: p.kernels?.top ?? [],
              advice: p.advice.map((a) => ({
                id: a.id,
                severity: a.severity,
                message: show(a.message),
                suggestion: show(a.suggestion),
              })),
              warnings: p.warnings
                .slice(0, 50)
                .map((w) => `${w.file}${w.line ? `:${w.line}` : ''}: ${show(w.message)}`),
              ...(cmp && cmp.runId === r.id ? { comparison: cmp.c } : {}),
            },
          ];
        } catch {
          return []; // a run cut off before its profile was stored has nothing to show
        }
      });
  },
  html(list, t) {
    if (!list.length) return '';
    const k = (key: string, p?: Record<string, unknown>) => t(`stage-profiling:${key}`, p);
    const out: string[] = [];
    const h = (s: string) => out.push(s);
    h(`<section id="profiling"><h2>${esc(k('report.title'))}</h2>`);
    for (const p of list) {
      h(`<h3>${esc(k('report.run', { source: p.source, kind: p.kind, ranks: p.ranks }))}</h3>`);
      if (p.steps.length) {
        h(`<h4>${esc(k('report.breakdown'))}</h4>`);
        for (const s of p.steps)
          h(
            `<div class="small">${esc(k('report.rank'))} ${esc(s.rank ?? '?')} · ${esc(k('report.step'))} ${esc(s.step ?? '?')}</div>${bar(
              [
                { label: k('report.computing'), value: Math.round(s.computingUs), cls: 'c-direct' },
                {
                  label: k('report.communication'),
                  value: Math.round(s.communicationNotOverlappedUs),
                  cls: 'c-fail',
                },
                { label: k('report.free'), value: Math.round(s.freeUs), cls: 'c-warn' },
              ],
            )}`,
          );
      }
      if (p.taskTypes.length) {
        h(
          `<h4>${esc(k('report.taskTypes'))}</h4><table><tr><th>${esc(k('report.taskType'))}</th><th>${esc(k('report.time'))}</th><th>${esc(k('report.share'))}</th></tr>`,
        );
        for (const x of p.taskTypes)
          h(
            `<tr><td><code>${esc(x.taskType)}</code></td><td>${us(x.us)}</td><td>${pc(x.share)}</td></tr>`,
          );
        h('</table>');
      }
      if (p.top.length) {
        h(
          `<h4>${esc(k('report.top'))}</h4><table><tr><th>${esc(k('report.kernel'))}</th><th>${esc(k('report.opType'))}</th><th>${esc(k('report.taskType'))}</th><th>${esc(k('report.time'))}</th><th>${esc(k('report.count'))}</th></tr>`,
        );
        for (const x of p.top.slice(0, MAX_ROWS))
          h(
            `<tr><td><code>${esc(x.name)}</code></td><td>${esc(x.opType)}</td><td>${esc(x.taskType)}</td><td>${us(x.us)}</td><td>${x.count}</td></tr>`,
          );
        h('</table>');
      }
      h(`<h4>${esc(k('report.advice'))}</h4>`);
      if (!p.advice.length) h(`<p>${esc(k('report.noAdvice'))}</p>`);
      for (const a of p.advice)
        h(
          `<p>${pill(SEV[a.severity] ?? 'skip', k(`report.severity.${a.severity}`))} <code>${esc(a.id)}</code> ${esc(a.message)}<br><span class="small">→ ${esc(a.suggestion)}</span></p>`,
        );
      if (p.warnings.length) {
        h(`<h4>${esc(k('report.warnings'))}</h4><ul>`);
        for (const w of p.warnings) h(`<li class="small">${esc(w)}</li>`);
        h('</ul>');
      }
      if (p.comparison) h(compareHtml(p.comparison, k));
    }
    h('</section>');
    return out.join('');
  },
  md(list, t) {
    const k = (key: string, p?: Record<string, unknown>) => t(`stage-profiling:${key}`, p);
    const out: string[] = [];
    const p = (s = '') => out.push(s);
    if (!list.length) return '';
    p();
    p(`## ${k('report.title')}`);
    for (const x of list) {
      p();
      p(`### ${k('report.run', mdParams({ source: x.source, kind: x.kind, ranks: x.ranks }))}`);
      if (x.steps.length) {
        p();
        p(
          `| ${k('report.rank')} | ${k('report.step')} | ${k('report.computing')} | ${k('report.communication')} | ${k('report.overlapped')} | ${k('report.free')} | ${k('report.bubble')} |`,
        );
        p('|---|---|---|---|---|---|---|');
        for (const s of x.steps)
          p(
            `| ${s.rank ?? '?'} | ${s.step ?? '?'} | ${us(s.computingUs)} | ${us(s.communicationNotOverlappedUs)} | ${us(s.overlappedUs)} | ${us(s.freeUs)} | ${us(s.bubbleUs)} |`,
          );
      }
      if (x.top.length) {
        p();
        p(
          `| ${k('report.kernel')} | ${k('report.taskType')} | ${k('report.time')} | ${k('report.count')} |`,
        );
        p('|---|---|---|---|');
        for (const r of x.top.slice(0, MD_ROWS))
          p(
            `| ${code(r.name).replace(/\|/g, '\\|')} | ${cell(r.taskType)} | ${us(r.us)} | ${r.count} |`,
          );
      }
      p();
      p(`**${k('report.advice')}**`);
      p();
      if (!x.advice.length) p(k('report.noAdvice'));
      for (const a of x.advice)
        p(
          `- **${k(`report.severity.${a.severity}`)}** ${code(a.id)}: ${md(a.message)} → ${md(a.suggestion)}`,
        );
      if (x.warnings.length) {
        p();
        for (const w of x.warnings) p(`- ⚠ ${cell(w)}`);
      }
      if (x.comparison) out.push(...compareMd(x.comparison, k));
    }
    return out.join('\n');
  },
};

type K = (key: string, p?: Record<string, unknown>) => string;
type Compared = z.infer<typeof ReportProfilingCompare>;

/** The comparison in HTML: every value from a host escaped. */
function compareHtml(c: Compared, k: K): string {
  const out: string[] = [
    `<h4>${esc(k('report.compare.title'))}</h4>`,
    `<p>${esc(k('report.compare.against', { a: c.a, b: c.b }))}</p>`,
    `<p>${esc(
      c.stepRatio === null
        ? k('report.compare.noStep')
        : k('report.compare.step', {
            aMs: ms(c.aStepUs),
            bMs: ms(c.bStepUs),
            ratio: c.stepRatio.toFixed(3),
          }),
    )}</p>`,
    `<table><tr><th>${esc(k('ui.compare.category'))}</th><th>a</th><th>b</th><th>${esc(k('ui.compare.delta'))}</th></tr>`,
  ];
  for (const x of c.categories)
    out.push(
      `<tr><td>${esc(k(CATEGORY[x.name] ?? x.name))}</td><td>${x.aUs === null ? '—' : us(x.aUs)}</td><td>${x.bUs === null ? '—' : us(x.bUs)}</td><td>${signed(x.diffUs)}</td></tr>`,
    );
  out.push('</table>');
  const rowsHtml = (title: string, rows: Compared['ops']) => {
    if (!rows.length) return;
    out.push(
      `<h4>${esc(title)}</h4><table><tr><th>${esc(k('ui.compare.name'))}</th><th>a</th><th>b</th><th>${esc(k('ui.compare.delta'))}</th><th>${esc(k('ui.compare.ratioCol'))}</th></tr>`,
    );
    for (const r of rows)
      out.push(
        `<tr><td><code>${esc(r.name)}</code></td><td>${us(r.aUs)}</td><td>${us(r.bUs)}</td><td>${signed(r.bUs - r.aUs)}</td><td>${r.ratio === null ? '—' : `×${r.ratio.toFixed(2)}`}</td></tr>`,
      );
    out.push('</table>');
  };
  rowsHtml(k('ui.compare.taskTypes'), c.taskTypes);
  rowsHtml(k('report.compare.ops'), c.ops);
  out.push(
    `<p class="small">${esc(k('report.compare.advice', { fixed: c.advice.fixed.join(', ') || '—', added: c.advice.added.join(', ') || '—' }))}</p>`,
  );
  return out.join('');
}

/** The comparison in Markdown: host text escaped, names as code spans they cannot close. */
function compareMd(c: Compared, k: K): string[] {
  const out = [
    '',
    `#### ${md(k('report.compare.title'))}`,
    '',
    k('report.compare.against', mdParams({ a: c.a, b: c.b })),
    '',
    c.stepRatio === null
      ? k('report.compare.noStep')
      : k('report.compare.step', {
          aMs: ms(c.aStepUs),
          bMs: ms(c.bStepUs),
          ratio: c.stepRatio.toFixed(3),
        }),
    '',
    `| ${cell(k('ui.compare.category'))} | a | b | ${cell(k('ui.compare.delta'))} |`,
    '|---|---|---|---|',
    ...c.categories.map(
      (x) =>
        `| ${cell(k(CATEGORY[x.name] ?? x.name))} | ${x.aUs === null ? '—' : us(x.aUs)} | ${x.bUs === null ? '—' : us(x.bUs)} | ${signed(x.diffUs)} |`,
    ),
  ];
  for (const [title, rows] of [
    [k('ui.compare.taskTypes'), c.taskTypes],
    [k('report.compare.ops'), c.ops],
  ] as const)
    if (rows.length)
      out.push(
        '',
        `**${md(title)}**`,
        '',
        `| ${cell(k('ui.compare.name'))} | a | b | ${cell(k('ui.compare.delta'))} | ${cell(k('ui.compare.ratioCol'))} |`,
        '|---|---|---|---|---|',
        ...rows.map(
          (r) =>
            `| ${code(r.name).replace(/\|/g, '\\|')} | ${us(r.aUs)} | ${us(r.bUs)} | ${signed(r.bUs - r.aUs)} | ${r.ratio === null ? '—' : `×${r.ratio.toFixed(2)}`} |`,
        ),
      );
  out.push(
    '',
    k(
      'report.compare.advice',
      mdParams({
        fixed: c.advice.fixed.join(', ') || '—',
        added: c.advice.added.join(', ') || '—',
      }),
    ),
  );
  return out;
}
