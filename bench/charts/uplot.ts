// uPlot: stacked bars as three bar series of the running sums, drawn back to front.
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { COLOURS, PARTS, ZOOMS, breakdown, heap, nextFrame, type ChartPage } from './data';

async function first(): Promise<number> {
  const { x, parts } = breakdown();
  const n = x.length;
  const t0 = performance.now();
  // stacked: each series is the sum of it and those below it; the tallest is drawn first
  const sums = parts.map(() => new Float64Array(n));
  for (let i = 0; i < n; i++) {
    let acc = 0;
    for (let p = 0; p < parts.length; p++) sums[p]![i] = acc += parts[p]![i]!;
  }
  const bars = uPlot.paths.bars!({ size: [1, Infinity], gap: 0 });
  const u = new uPlot(
    {
      width: 1200,
      height: 400,
      scales: { x: { time: false } },
      legend: { show: false },
      cursor: { show: false },
      series: [
        {},
        ...[2, 1, 0].map((p) => ({
          label: PARTS[p],
          fill: COLOURS[p],
          width: 0, // fill only, as the other candidates draw them
          paths: bars,
          points: { show: false },
        })),
      ],
    },
    [x as unknown as number[], ...[2, 1, 0].map((p) => sums[p]! as unknown as number[])],
    document.getElementById('chart')!,
  );
  await nextFrame();
  zoomAll = async () => {
    const redrawMs: number[] = [];
    for (const [a, b] of ZOOMS) {
      const t = performance.now();
      u.setScale('x', { min: a * n, max: b * n });
      await nextFrame();
      redrawMs.push(performance.now() - t);
    }
    return redrawMs;
  };
  return performance.now() - t0;
}
let zoomAll: () => Promise<number[]> = () => Promise.resolve([]);
(window as unknown as ChartPage).__chart = { first, zooms: () => zoomAll(), heap };
