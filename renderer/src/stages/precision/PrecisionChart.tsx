import { useEffect, useMemo, useRef } from 'react';
import { useTranslation } from 'react-i18next';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { errorAxis, errorTick, errorTicks } from '../../../../shared/stages/precision/curve';
import type { ModuleCompare } from '../../../../shared/stages/precision/api';

const NS = 'stage-precision:';
const CAP = 2000;
/** Bars by result; the cosine line on its own axis. Colours match the report's SVG. */
const RESULTS = [
  ['pass', '#3a9d5d'],
  ['warning', '#d89614'],
  ['error', '#d0453a'],
  ['none', '#999999'],
] as const;

/** The error a module is drawn by: MaxAbsErr where tensors were compared, else the statistics drift. */
export const errorOf = (m: ModuleCompare) => m.maxAbsErr ?? m.statDrift;

/**
 * What the chart draws, apart from uPlot: x = execution order, one bar series per result (log10
 * of the error, an error of 0 on the floor labelled "0") and the cosine. Kept separate so the
 * floor is tested without a canvas.
 */
export function chartData(modules: readonly ModuleCompare[]) {
  const mods = modules.slice(0, CAP);
  const axis = errorAxis(mods.map(errorOf));
  const x = mods.map((_m, i) => i);
  const bars = RESULTS.map(([r]) => mods.map((m, i) => (m.result === r ? axis.logs[i]! : null)));
  const cosine = mods.map((m) => m.cosine);
  return { mods, axis, x, bars, cosine, zeros: mods.some((m) => errorOf(m) === 0) };
}

const fmt = (x: number | null | undefined) =>
  x === null || x === undefined ? '—' : x === 0 ? '0' : x.toExponential(2);

/**
 * The per-layer chart: the error of every module in execution order as bars coloured by result
 * (log scale, with a floor for 0) and the cosine as a line, drawn by uPlot (bundled, as the
 * profiling breakdown). Drag to zoom, double-click for all; the legend names the module at the pointer.
 */
export function PrecisionChart({ modules }: { modules: readonly ModuleCompare[] }) {
  const { t } = useTranslation();
  const box = useRef<HTMLDivElement>(null);
  const d = useMemo(() => chartData(modules), [modules]);
  useEffect(() => {
    const el = box.current;
    if (!el || !d.mods.length) return;
    const { axis } = d;
    const name = (i: number | null) => (i === null ? '' : (d.mods[Math.round(i)]?.module ?? ''));
    const cosMin = Math.min(0.99, ...d.cosine.filter((c): c is number => c !== null));
    const u = new uPlot(
      {
        width: Math.max(el.clientWidth, 300),
        height: 220,
        scales: {
          x: { time: false },
          err: { range: () => [axis.bottom, axis.top] },
          cos: { range: () => [cosMin - (1 - cosMin) * 0.05, 1] },
        },
        axes: [
          { values: (_u, ticks) => ticks.map((v) => String(Math.round(v))), size: 30 },
          {
            scale: 'err',
            size: 50,
            splits: () => errorTicks(axis),
            values: (_u, ticks) => ticks.map((v) => errorTick(v, axis.floor)),
          },
          { scale: 'cos', side: 1, size: 60, grid: { show: false } },
        ],
        series: [
          { label: t(`${NS}report.module`), value: (_u, v) => name(v) },
          ...RESULTS.map(([r, colour]) => ({
            label: t(`${NS}result.${r}`),
            scale: 'err',
            fill: colour,
            stroke: colour,
            width: 0,
            paths: uPlot.paths.bars!({ size: [0.9, 40] }),
            points: { show: false },
            // bars rise from the axis bottom, so an error on the floor (0) still shows
            fillTo: () => axis.bottom,
            value: (_u: uPlot, _v: number | null, _s: number, i: number | null) =>
              i === null || d.mods[i]?.result !== r ? '' : fmt(errorOf(d.mods[i]!)),
          })),
          {
            label: t(`${NS}ui.cosine`),
            scale: 'cos',
            stroke: '#2b6cb0',
            width: 1.5,
            points: { show: false },
            value: (_u: uPlot, v: number | null) => (v === null ? '—' : v.toFixed(6)),
          },
        ],
      },
      [d.x, ...d.bars, d.cosine],
      el,
    );
    const ro = new ResizeObserver(() =>
      u.setSize({ width: Math.max(el.clientWidth, 300), height: 220 }),
    );
    ro.observe(el);
    return () => {
      ro.disconnect();
      u.destroy();
    };
  }, [d, t]);
  if (!d.mods.length) return null;
  return (
    <figure data-testid="precision-curve" data-zero-floor={d.zeros ? 'true' : undefined}>
      <div ref={box} style={{ width: '100%' }} />
      <figcaption className="muted small">
        {t(`${NS}report.chart`)}
        {d.zeros && ` · ${t(`${NS}report.zero`)}`}
      </figcaption>
    </figure>
  );
}
