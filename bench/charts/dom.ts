// The profiling view's chart today: plain DOM bars (a flex row of three coloured divs per bar).
import { COLOURS, ZOOMS, breakdown, heap, nextFrame, type ChartPage } from './data';

async function first(): Promise<number> {
  const { parts } = breakdown();
  const n = parts[0]!.length;
  const t0 = performance.now();
  const box = document.getElementById('chart')!;
  box.style.cssText = 'display:flex;align-items:flex-end;height:400px;width:1200px;overflow:hidden';
  let max = 0;
  for (let i = 0; i < n; i++) max = Math.max(max, parts[0]![i]! + parts[1]![i]! + parts[2]![i]!);
  const bars: HTMLDivElement[] = [];
  const frag = document.createDocumentFragment();
  for (let i = 0; i < n; i++) {
    const bar = document.createElement('div');
    bar.style.cssText = 'flex:1 0 0;display:flex;flex-direction:column-reverse;min-width:0';
    for (let p = 0; p < 3; p++) {
      const seg = document.createElement('div');
      seg.style.height = `${(400 * parts[p]![i]!) / max}px`;
      seg.style.background = COLOURS[p]!;
      bar.appendChild(seg);
    }
    bars.push(bar);
    frag.appendChild(bar);
  }
  box.appendChild(frag);
  await nextFrame();
  zoomAll = async () => {
    const redrawMs: number[] = [];
    for (const [a, b] of ZOOMS) {
      const t = performance.now();
      // a zoom: the bars outside the window hidden, the rest laid out across the width
      const lo = Math.floor(a * n);
      const hi = Math.ceil(b * n);
      for (let i = 0; i < n; i++) bars[i]!.style.display = i >= lo && i < hi ? 'flex' : 'none';
      await nextFrame();
      redrawMs.push(performance.now() - t);
    }
    return redrawMs;
  };
  return performance.now() - t0;
}
let zoomAll: () => Promise<number[]> = () => Promise.resolve([]);
(window as unknown as ChartPage).__chart = { first, zooms: () => zoomAll(), heap };
