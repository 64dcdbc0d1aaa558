import { useEffect, useMemo, useRef } from 'react';
import { useTranslation } from 'react-i18next';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { StepBreakdown } from '../../../../shared/stages/profiling/api';
import { uiNumber } from '../../format';

const NS = 'stage-profiling:';
const PARTS = [
  ['computingUs', 'report.computing', '#1a7f37'],
  ['communicationNotOverlappedUs', 'report.communication', '#cf222e'],
  ['freeUs', 'report.free', '#9a6700'],
] as const;

/**
 * Every step of every rank as a stacked breakdown (computing, communication not overlapped,
 * free), drawn by uPlot as stepped stacked areas — chosen by bench/charts.bench.ts on 128 ranks ×
 * 1000 steps (docs/profiling-performance.md): columns narrower than a pixel look the same as bars
 * and draw in a fraction of the time. Rank by rank along the axis; drag to zoom, double-click to
 * see all; the legend shows the values at the pointer.
 */
export function BreakdownChart({ steps }: { steps: StepBreakdown[] }) {
  const { t } = useTranslation();
  const box = useRef<HTMLDivElement>(null);
  const sorted = useMemo(
    () =>
      [...steps].sort((a, b) => (a.rank ?? -1) - (b.rank ?? -1) || (a.step ?? -1) - (b.step ?? -1)),
    [steps],
  );
  useEffect(() => {
    const el = box.current;
    if (!el || !sorted.length) return;
    const n = sorted.length;
    const x = Array.from({ length: n }, (_, i) => i);
    // stacked: each series the running sum of it and those below; the tallest drawn first
    const sums = PARTS.map(() => new Array<number>(n));
    for (let i = 0; i < n; i++) {
      let acc = 0;
      PARTS.forEach(([k], p) => (sums[p]![i] = acc += sorted[i]![k]));
    }
    const label = (i: number) => {
      const s = sorted[Math.round(i)];
      return s ? `${t(`${NS}report.rank`)} ${s.rank ?? '?'} · ${s.step ?? '?'}` : '';
    };
    const order = [2, 1, 0];
    const u = new uPlot(
      {
        width: Math.max(el.clientWidth, 300),
        height: 260,
        // a step's time from zero, so the parts read as shares of it
        scales: { x: { time: false }, y: { range: (_u, _min, max) => [0, max * 1.05] } },
        axes: [
          { values: (_u, ticks) => ticks.map(label), size: 40, space: 120 },
          { values: (_u, ticks) => ticks.map((v) => `${Math.round(v / 1000)} ms`), size: 60 },
        ],
        series: [
          { label: t(`${NS}report.step`), value: (_u, v) => (v === null ? '' : label(v)) },
          ...order.map((p) => ({
            label: t(`${NS}${PARTS[p]![1]}`),
            fill: PARTS[p]![2],
            stroke: PARTS[p]![2],
            width: 0,
            paths: uPlot.paths.stepped!({ align: 1 }),
            points: { show: false },
            // the legend gives the part itself, not the running sum the area is drawn from
            value: (_u: uPlot, _v: number | null, _s: number, i: number | null) =>
              i === null ? '' : `${uiNumber(Math.round(sorted[i]![PARTS[p]![0]]))} µs`,
          })),
        ],
      },
      [x, ...order.map((p) => sums[p]!)],
      el,
    );
    const ro = new ResizeObserver(() =>
      u.setSize({ width: Math.max(el.clientWidth, 300), height: 260 }),
    );
    ro.observe(el);
    return () => {
      ro.disconnect();
      u.destroy();
    };
  }, [sorted, t]);
  return (
    <section data-testid="profiling-breakdown">
      <h3>{t(`${NS}report.breakdown`)}</h3>
      <div ref={box} style={{ width: '100%' }} />
    </section>
  );
}
