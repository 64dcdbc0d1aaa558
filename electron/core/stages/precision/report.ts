import type * as z from 'zod';
import type { ReportPrecision } from '../../../../shared/stages/precision/report';
import { errorAxis, errorTick } from '../../../../shared/stages/precision/curve';
import { esc, MAX_ROWS, pill } from '../../reports/html-kit';
import { cell, MAX_ROWS as MD_ROWS } from '../../reports/md-kit';
import type { StageReport } from '../define';
import { PrecisionRepository } from './repository';
import { compareRuns } from './runs-compare';

type Section = z.infer<typeof ReportPrecision>[];
const CURVE_MAX = 2000;
const OVER_TIME_MAX = 50;
const NS = 'stage-precision:';
const RESULT_CLS: Record<string, string> = {
  pass: 'pass',
  warning: 'warn',
  error: 'fail',
  none: 'skip',
};

/**
 * Per-layer chart as inline SVG: one column per module in execution order, cosine as a line
 * (scaled between its lowest value and 1) and the error (MaxAbsErr where tensors exist, the
 * statistics drift otherwise, log-scaled, 0 on a floor line marked 0) as bars coloured by the
 * module's result.
 */
export function curveSvg(curve: Section[number]['curve'], title: string, zeroNote = ''): string {
  const W = 720;
  const H = 160;
  const n = curve.length || 1;
  const step = W / n;
  const axis = errorAxis(curve.map((c) => c.error));
  const y = (v: number) => H - ((v - axis.bottom) / (axis.top - axis.bottom || 1)) * (H - 20);
  const colour: Record<string, string> = {
    pass: '#3a9d5d',
    warning: '#d89614',
    error: '#d0453a',
    none: '#999',
  };
  const bars = curve
    .map((c, i) => {
      const e = axis.logs[i];
      if (e === null || e === undefined) return '';
      const top = y(e);
      return `<rect x="${(i * step).toFixed(2)}" y="${top.toFixed(2)}" width="${Math.max(step - 0.5, 0.5).toFixed(2)}" height="${(H - top).toFixed(2)}" fill="${colour[c.result] ?? '#999'}"><title>${esc(c.module)}: ${esc(c.error)}</title></rect>`;
    })
    .join('');
  // the floor where errors of exactly 0 are drawn, labelled 0 (log10 of 0 does not exist)
  const zeros = curve.some((c) => c.error === 0);
  const floor = zeros
    ? `<line class="zero-floor" x1="0" x2="${W}" y1="${y(axis.floor).toFixed(2)}" y2="${y(axis.floor).toFixed(2)}" stroke="#888" stroke-dasharray="3 3"/><text x="2" y="${(y(axis.floor) - 2).toFixed(2)}" font-size="9" fill="#666">${errorTick(axis.floor, axis.floor)}</text>`
    : '';
  const cos = curve.map((c) => c.cosine);
  const cmin = Math.min(0.99, ...cos.filter((x): x is number => x !== null));
  const points = cos
    .map((c, i) =>
      c === null
        ? null
        : `${(i * step + step / 2).toFixed(2)},${(10 + (1 - (c - cmin) / (1 - cmin || 1)) * (H - 30)).toFixed(2)}`,
    )
    .filter(Boolean)
    .join(' ');
  const line = points
    ? `<polyline fill="none" stroke="#2b6cb0" stroke-width="1.5" points="${points}"/>`
    : '';
  const caption = zeros && zeroNote ? `${title} · ${zeroNote}` : title;
  return `<figure class="precision-chart"><svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="100%" role="img" aria-label="${esc(title)}"><rect width="${W}" height="${H}" fill="none" stroke="#ccc"/>${bars}${floor}${line}</svg><figcaption class="small">${esc(caption)}</figcaption></figure>`;
}

/** The session's moves over time: the newest run's list holds them all. */
const overTime = (list: Section) =>
  list.reduce<NonNullable<Section[number]['overTime']>>(
    (best, p) => ((p.overTime?.length ?? 0) > best.length ? p.overTime! : best),
    [],
  );

export const precisionReport: StageReport<Section> = {
  build({ sessionId, runs, services, show }) {
    const repo = new PrecisionRepository(services.db, services.artifacts);
    // every precision run of the session, oldest first, each against the one before it
    const history = repo.history(sessionId).reverse();
    const moves: NonNullable<Section[number]['overTime']> = [];
    for (let i = 1; i < history.length; i++) {
      const side = (id: number) => ({
        row: history.find((h) => h.stageRunId === id)!,
        view: repo.get(id, ''),
      });
      const r = compareRuns(side(history[i - 1]!.stageRunId), side(history[i]!.stageRunId));
      moves.push({
        a: r.a.stageRunId,
        b: r.b.stageRunId,
        moved: r.moved,
        summary: show(r.summary),
      });
    }
    return runs
      .filter((r) => repo.has(r.id))
      .sort((a, b) => a.id - b.id)
      .map((r) => {
        const v = repo.get(r.id, r.host);
        const f = v.firstDivergence;
        return {
          stageRunId: r.id,
          source: v.source,
          host: r.host,
          baseline: v.baseline,
          entry: v.entry,
          dtype: v.dtype,
          mode: v.mode,
          counts: v.counts,
          firstDivergence: f
            ? {
                module: f.module,
                source: f.source,
                result: f.result,
                cosine: f.cosine,
                maxAbsErr: f.maxAbsErr,
                statDrift: f.statDrift,
              }
            : null,
          curve: v.modules.slice(0, CURVE_MAX).map((m) => ({
            module: m.module,
            result: m.result,
            cosine: m.cosine,
            error: m.maxAbsErr ?? m.statDrift,
          })),
          checks: r.checks.map((c) => ({ id: c.id, status: c.status, summary: show(c.summary) })),
          overTime: moves.filter((x) => x.b <= r.id).slice(-OVER_TIME_MAX),
        };
      });
  },
  html(list, t) {
    if (!list.length) return '';
    const out: string[] = [`<section id="precision"><h2>${esc(t(`${NS}report.title`))}</h2>`];
    for (const p of list) {
      out.push(
        `<h3>${esc(t(`${NS}report.summary`, { ...p, mode: t(`${NS}modeName.${p.mode}`) }))}</h3>`,
      );
      const f = p.firstDivergence;
      out.push(
        f
          ? `<p><strong>${esc(t(`${NS}report.first`))}:</strong> <code>${esc(f.module)}</code> ${pill(RESULT_CLS[f.result] ?? 'skip', t(`${NS}result.${f.result}`))} <code>${esc(f.source ?? '')}</code></p>`
          : p.curve.length
            ? `<p class="s-pass">${esc(t(`${NS}report.none`))}</p>`
            : `<p class="s-warn">${esc(t(`${NS}report.noneCompared`))}</p>`,
      );
      if (p.curve.length)
        out.push(curveSvg(p.curve, t(`${NS}report.chart`), t(`${NS}report.zero`)));
      out.push(
        `<table><tr><th>${esc(t('report.check'))}</th><th>${esc(t(`${NS}report.result`))}</th><th>${esc(t('report.message'))}</th></tr>`,
      );
      for (const c of p.checks.slice(0, MAX_ROWS))
        out.push(
          `<tr><td><code>${esc(c.id)}</code></td><td>${pill(c.status, t(`sessions.status.${c.status}`))}</td><td>${esc(c.summary)}</td></tr>`,
        );
      out.push('</table>');
    }
    const moves = overTime(list);
    if (moves.length) {
      out.push(`<h3>${esc(t(`${NS}report.overTime`))}</h3><ul class="precision-over-time">`);
      for (const x of moves) out.push(`<li>${esc(x.summary)}</li>`);
      out.push('</ul>');
    }
    out.push('</section>');
    return out.join('');
  },
  md(list, t) {
    const out: string[] = [];
    for (const p of list) {
      out.push(
        '',
        `## ${t(`${NS}report.title`)}`,
        '',
        t(`${NS}report.summary`, { ...p, mode: t(`${NS}modeName.${p.mode}`) }),
        '',
      );
      const f = p.firstDivergence;
      out.push(
        f
          ? `**${t(`${NS}report.first`)}${t('common.colon').trimEnd()}** \`${f.module}\`${t('common.paren', { text: t(`${NS}result.${f.result}`) })} ${f.source ? `\`${f.source}\`` : ''}`
          : t(`${NS}report.${p.curve.length ? 'none' : 'noneCompared'}`),
        '',
      );
      out.push(
        `| ${t('report.check')} | ${t(`${NS}report.result`)} | ${t('report.message')} |`,
        '|---|---|---|',
      );
      for (const c of p.checks.slice(0, MD_ROWS))
        out.push(`| \`${c.id}\` | ${t(`sessions.status.${c.status}`)} | ${cell(c.summary)} |`);
    }
    const moves = overTime(list);
    if (moves.length) {
      out.push('', `### ${t(`${NS}report.overTime`)}`, '');
      for (const x of moves) out.push(`- ${cell(x.summary)}`);
    }
    return out.join('\n');
  },
};
