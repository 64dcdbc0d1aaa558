import type { z } from 'zod';
import type { ReportProfiling } from '../../../../shared/stages/profiling/report';
import { bar, esc, MAX_ROWS, pill } from '../../reports/html-kit';
import { cell, MAX_ROWS as MD_ROWS } from '../../reports/md-kit';
import type { StageReport } from '../define';
import { ProfileRepository } from './repository';

type Section = z.infer<typeof ReportProfiling>[];
const SEV = { high: 'fail', medium: 'warn', low: 'skip' } as Record<string, string>;
const us = (x: number) => Math.round(x).toLocaleString('en-US');
const pc = (x: number) => `${(x * 100).toFixed(1)}%`;
const MAX_STEPS = 64;

/** The profiling stage in a report: per stored profile, the breakdown, top kernels and advice. */
export const profilingReport: StageReport<Section> = {
  build({ runs, services, show }) {
    const repo = new ProfileRepository(services.db, services.artifacts);
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
      p(`### ${k('report.run', { source: x.source, kind: x.kind, ranks: x.ranks })}`);
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
          p(`| \`${cell(r.name)}\` | ${cell(r.taskType)} | ${us(r.us)} | ${r.count} |`);
      }
      p();
      p(`**${k('report.advice')}**`);
      p();
      if (!x.advice.length) p(k('report.noAdvice'));
      for (const a of x.advice)
        p(
          `- **${k(`report.severity.${a.severity}`)}** \`${a.id}\`: ${a.message} → ${a.suggestion}`,
        );
      if (x.warnings.length) {
        p();
        for (const w of x.warnings) p(`- ⚠ ${cell(w)}`);
      }
    }
    return out.join('\n');
  },
};
