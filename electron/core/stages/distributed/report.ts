import type * as z from 'zod';
import type { CheckOutcome } from '../../../../shared/api';
import type { ReportDistributed } from '../../../../shared/stages/distributed/report';
import { esc, MAX_ROWS, pill } from '../../reports/html-kit';
import { cell, MAX_ROWS as MD_ROWS } from '../../reports/md-kit';
import type { StageReport } from '../define';
import { severity } from '../../../../shared/stages/distributed/worst';
import { baseCheckId } from './checks';
import { hostWord } from '../../../../shared/api/review-targets';
import { DistributedRepository } from './repository';

type Section = z.infer<typeof ReportDistributed>[];
const MARK: Record<string, string> = { pass: '✓', skip: '–', warn: '!', fail: '✗', error: '?' };
const MAX_HOSTS = 256;

/** The worst of a host's outcomes of one check, with their summaries (the failing ones first). */
function cellOf(outcomes: CheckOutcome[], show: (t: CheckOutcome['summary']) => string) {
  const sorted = [...outcomes].sort((a, b) => severity(b.status) - severity(a.status));
  const status = sorted[0]?.status ?? 'skip';
  const shown = sorted.filter((o) => o.status === status).slice(0, 3);
  return { status, summary: shown.map((o) => show(o.summary)).join(' ') };
}

/** The distributed stage in a report: per run, the fleet matrix, what disagrees, the collective. */
export const distributedReport: StageReport<Section> = {
  build({ runs, services, show }) {
    const repo = new DistributedRepository(services.db, services.artifacts);
    return runs
      .filter((r) => repo.has(r.id))
      .map((r) => {
        const d = repo.get(r.id);
        const hostOutcomes = r.checks.filter((c) => c.host !== undefined);
        const ids = [...new Set(hostOutcomes.map((c) => baseCheckId(c.id)))];
        const titles = new Map(r.checks.map((c) => [baseCheckId(c.id), show(c.title)]));
        return {
          stageRunId: r.id,
          hosts: d.hosts.map((h) => h.host),
          checks: ids.map((id) => ({ id, title: titles.get(id) ?? id })),
          matrix: d.hosts.slice(0, MAX_HOSTS).map((h) => ({
            host: h.host,
            cells: ids.map((id) => {
              const mine = hostOutcomes.filter(
                (c) => c.host === h.host && baseCheckId(c.id) === id,
              );
              return {
                check: id,
                ...(mine.length ? cellOf(mine, show) : { status: '', summary: '' }),
              };
            }),
          })),
          fleetChecks: r.checks
            .filter((c) => c.host === undefined)
            .map((c) => ({ id: c.id, status: c.status, summary: show(c.summary) })),
          disagreements: d.disagreements.map((x) => ({
            item: x.item,
            values: x.values.slice(0, MAX_HOSTS),
          })),
          collective: d.collective
            ? {
                launcher: d.collective.launcher,
                backend: d.collective.backend,
                worldSize: d.collective.worldSize,
                ok: d.collective.ok,
                busBandwidthGBs: d.collective.busBandwidthGBs ?? null,
                error: d.collective.error ? show(d.collective.error) : null,
                cause: d.collective.cause ? show(d.collective.cause.message) : null,
                bandwidth: d.collective.bandwidth.map((b) => ({
                  bytes: b.bytes,
                  busBandwidthGBs: b.busBandwidthGBs,
                })),
              }
            : null,
        };
      });
  },
  html(list, t) {
    if (!list.length) return '';
    const k = (key: string, p?: Record<string, unknown>) => t(`stage-distributed:${key}`, p);
    const out: string[] = [];
    const h = (s: string) => out.push(s);
    // a host's name as code; this machine in words
    const hostHtml = (name: string) => {
      const word = hostWord(t, name);
      return word === name ? `<code>${esc(name)}</code>` : esc(word);
    };
    h(`<section id="distributed"><h2>${esc(k('report.title'))}</h2>`);
    for (const s of list) {
      h(`<h3>${esc(k('report.matrix'))}</h3><table><tr><th>${esc(k('report.host'))}</th>`);
      for (const c of s.checks) h(`<th title="${esc(c.id)}">${esc(c.title)}</th>`);
      h('</tr>');
      for (const row of s.matrix.slice(0, MAX_ROWS)) {
        h(`<tr><td>${hostHtml(row.host)}</td>`);
        for (const c of row.cells)
          h(
            c.status
              ? `<td title="${esc(c.summary)}">${pill(c.status, MARK[c.status] ?? c.status)}</td>`
              : '<td>—</td>',
          );
        h('</tr>');
      }
      h('</table>');
      for (const c of s.fleetChecks)
        h(
          `<p>${pill(c.status, t(`sessions.status.${c.status}`))} <code>${esc(c.id)}</code> ${esc(c.summary)}</p>`,
        );
      h(`<h3>${esc(k('report.disagree'))}</h3>`);
      if (!s.disagreements.length) h(`<p>${esc(k('ui.noDisagree'))}</p>`);
      else {
        h(
          `<table><tr><th>${esc(k('report.item'))}</th><th>${esc(k('report.host'))}</th><th></th></tr>`,
        );
        for (const d of s.disagreements)
          for (const v of d.values.slice(0, MAX_ROWS))
            h(
              `<tr><td><code>${esc(d.item)}</code></td><td>${hostHtml(v.host)}</td><td><code>${esc(v.value ?? '—')}</code></td></tr>`,
            );
        h('</table>');
      }
      h(`<h3>${esc(k('report.collective'))}</h3>`);
      const c = s.collective;
      if (!c) h(`<p>${esc(k('report.noCollective'))}</p>`);
      else {
        h(
          `<p>${pill(c.ok ? 'pass' : 'fail', t(`sessions.status.${c.ok ? 'pass' : 'fail'}`))} ${esc(c.launcher)} · ${esc(c.backend)} · ${esc(k('report.ranks', { count: c.worldSize }))}${
            c.busBandwidthGBs !== null ? ` · ${esc(c.busBandwidthGBs.toFixed(2))} GB/s` : ''
          }</p>`,
        );
        if (c.error) h(`<p>${esc(c.error)}</p>`);
        if (c.cause) h(`<p class="small">${esc(c.cause)}</p>`);
        if (c.bandwidth.length) {
          h(`<table><tr><th>${esc(k('ui.bytes'))}</th><th>${esc(k('ui.gbs'))}</th></tr>`);
          for (const b of c.bandwidth)
            h(`<tr><td>${esc(b.bytes)}</td><td>${esc(b.busBandwidthGBs.toFixed(3))}</td></tr>`);
          h('</table>');
        }
      }
    }
    h('</section>');
    return out.join('');
  },
  md(list, t) {
    if (!list.length) return '';
    const k = (key: string, p?: Record<string, unknown>) => t(`stage-distributed:${key}`, p);
    const out: string[] = [];
    const p = (s = '') => out.push(s);
    p();
    p(`## ${k('report.title')}`);
    for (const s of list) {
      p();
      p(`### ${k('report.matrix')}`);
      p();
      p(`| ${k('report.host')} | ${s.checks.map((c) => cell(c.title)).join(' | ')} |`);
      p(`|---|${s.checks.map(() => '---').join('|')}|`);
      for (const row of s.matrix.slice(0, MD_ROWS))
        p(
          `| ${cell(hostWord(t, row.host))} | ${row.cells.map((c) => (c.status ? `${MARK[c.status] ?? '?'} ${t(`sessions.status.${c.status}`)}` : '—')).join(' | ')} |`,
        );
      if (s.fleetChecks.length) {
        p();
        for (const c of s.fleetChecks)
          p(`- **${t(`sessions.status.${c.status}`)}** ${cell(c.id)}: ${cell(c.summary)}`);
      }
      p();
      p(`### ${k('report.disagree')}`);
      p();
      if (!s.disagreements.length) p(k('ui.noDisagree'));
      else {
        p(`| ${k('report.item')} | ${k('report.host')} | |`);
        p('|---|---|---|');
        for (const d of s.disagreements)
          for (const v of d.values.slice(0, MD_ROWS))
            p(`| ${cell(d.item)} | ${cell(hostWord(t, v.host))} | ${cell(v.value ?? '—')} |`);
      }
      p();
      p(`### ${k('report.collective')}`);
      p();
      const c = s.collective;
      if (!c) p(k('report.noCollective'));
      else {
        p(
          `**${t(`sessions.status.${c.ok ? 'pass' : 'fail'}`)}** ${cell(c.launcher)} · ${cell(c.backend)} · ${k('report.ranks', { count: c.worldSize })}${c.busBandwidthGBs !== null ? ` · ${c.busBandwidthGBs.toFixed(2)} GB/s` : ''}`,
        );
        if (c.error) p(`\n${cell(c.error)}`);
        if (c.cause) p(`\n${cell(c.cause)}`);
      }
    }
    return out.join('\n');
  },
};
