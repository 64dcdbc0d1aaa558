import type * as z from 'zod';
import type { ReportOps } from '../../../../shared/stages/ops/report';
import { bar, esc, MAX_ROWS, pill } from '../../reports/html-kit';
import { cell, code, esc as escParams, md, MAX_ROWS as MD_ROWS } from '../../reports/md-kit';
import type { StageReport } from '../define';
import { OpTraceRepository } from './repository';

type Section = z.infer<typeof ReportOps>[];

/** The ops stage in a report: each run's breakdown and the ops that are not plain direct. */
export const opsReport: StageReport<Section> = {
  build({ runs, services }) {
    const deps = services;
    const traces = new OpTraceRepository(deps.db, deps.artifacts);
    const ops = runs
      .filter((r) => traces.has(r.id))
      .flatMap((r) => {
        try {
          const o = traces.classified(r.id);
          return [
            {
              host: r.host,
              entry: o.entry,
              targetTorchNpu: o.targetTorchNpu,
              opList: o.opList,
              breakdown: o.breakdown,
              ops: o.ops.map((x) => ({
                op: `${x.op}${x.overload === 'default' ? '' : `.${x.overload}`}`,
                overload: x.overload,
                count: x.count,
                class: x.class,
                dynamic: x.dynamic,
                reason: x.reason,
                replacement: x.replacement ?? null,
                where: x.sources[0]?.at ?? null,
              })),
              error: o.error ? `${o.error.type}: ${o.error.message}` : null,
            },
          ];
        } catch {
          return []; // a run cut off before its trace was stored has nothing to show
        }
      });

    return ops;
  },
  html(list, t) {
    if (!list.length) return '';
    const out: string[] = [];
    const h = (s: string) => out.push(s);

    h(`<section id="ops"><h2>${esc(t('stage-ops:report.title'))}</h2>`);
    for (const o of list) {
      h(
        `<h3>${esc(t('stage-ops:report.summary', { host: o.host, entry: o.entry, version: o.targetTorchNpu, list: o.opList }))}</h3>`,
      );
      if (o.error) {
        h(`<p class="s-fail">${esc(o.error)}</p>`);
        continue;
      }
      h(
        bar([
          { label: t('stage-ops:ui.class.direct'), value: o.breakdown.direct, cls: 'c-direct' },
          {
            label: t('stage-ops:ui.class.needs-change'),
            value: o.breakdown.needsChange,
            cls: 'c-needs',
          },
          {
            label: t('stage-ops:ui.class.cpu-fallback'),
            value: o.breakdown.cpuFallback,
            cls: 'c-fallback',
          },
          {
            label: t('stage-ops:ui.class.unsupported'),
            value: o.breakdown.unsupported,
            cls: 'c-unsupported',
          },
        ]),
      );
      const rows = o.ops.filter((x) => x.class !== 'direct' || x.dynamic);
      h(
        `<table><tr><th>${esc(t('stage-ops:report.op'))}</th><th>${esc(t('stage-ops:report.calls'))}</th><th>${esc(t('stage-ops:report.class'))}</th><th>${esc(t('stage-ops:report.where'))}</th><th>${esc(t('report.message'))}</th></tr>`,
      );
      for (const x of rows.slice(0, MAX_ROWS))
        h(
          `<tr><td><code>${esc(x.op)}</code></td><td>${x.count}</td><td>${pill(x.class, t(`stage-ops:ui.class.${x.class}`))}${x.dynamic ? ` ${pill('warn', t('stage-ops:ui.dynamic'))}` : ''}</td><td><code>${esc(x.where ?? '')}</code></td><td>${esc(x.reason)}${x.replacement ? `<div class="small">→ ${esc(x.replacement)}</div>` : ''}</td></tr>`,
        );
      h(`</table>`);
    }
    h(`</section>`);

    return out.join('');
  },
  md(list, t) {
    const out: string[] = [];
    const p = (s = '') => out.push(s);
    for (const o of list) {
      p();
      p(`## ${t('stage-ops:report.title')}`);
      p();
      p(
        t(
          'stage-ops:report.summary',
          escParams({
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
        `${t('stage-ops:ui.class.direct')} **${o.breakdown.direct}** · ${t('stage-ops:ui.class.needs-change')} **${o.breakdown.needsChange}** · ${t('stage-ops:ui.class.cpu-fallback')} **${o.breakdown.cpuFallback}** · ${t('stage-ops:ui.class.unsupported')} **${o.breakdown.unsupported}**`,
      );
      const rows = o.ops.filter((x) => x.class !== 'direct' || x.dynamic);
      if (rows.length) {
        p();
        p(
          `| ${t('stage-ops:report.op')} | ${t('stage-ops:report.calls')} | ${t('stage-ops:report.class')} | ${t('stage-ops:report.where')} |`,
        );
        p('|---|---|---|---|');
        for (const x of rows.slice(0, MD_ROWS))
          p(
            `| ${code(x.op)} | ${x.count} | ${t(`stage-ops:ui.class.${x.class}`)}${x.dynamic ? t('common.paren', { text: t('stage-ops:ui.dynamic') }) : ''} | ${cell(x.where ?? '')} |`,
          );
      }
    }
    return out.join('\n');
  },
};
