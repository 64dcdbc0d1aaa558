// The stage's biggest chart input: step breakdowns of 128 ranks × 1000 steps (computing,
// communication not overlapped, free), one stacked bar per (rank, step), as the breakdown chart
// shows them. Deterministic, so every candidate draws the same bars.
export const RANKS = 128;
export const STEPS = 1000;
export const PARTS = ['computing', 'communication', 'free'] as const;
export const COLOURS = ['#1a7f37', '#cf222e', '#9a6700'];

export function breakdown(): { x: Float64Array; parts: Float64Array[] } {
  const n = RANKS * STEPS;
  const x = new Float64Array(n);
  const parts = PARTS.map(() => new Float64Array(n));
  let s = 12345;
  const rnd = () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32;
  for (let r = 0; r < RANKS; r++)
    for (let k = 0; k < STEPS; k++) {
      const i = r * STEPS + k;
      x[i] = i;
      parts[0]![i] = 80_000 + rnd() * 10_000 + (r === 17 ? 15_000 : 0);
      parts[1]![i] = 8_000 + rnd() * 6_000;
      parts[2]![i] = 4_000 + rnd() * 3_000;
    }
  return { x, parts };
}

/** What each candidate's page offers the bench: the first render, then the zooms (ms each). */
export interface ChartPage {
  __chart: { first(): Promise<number>; zooms(): Promise<number[]>; heap(): number | null };
}

export const nextFrame = () =>
  new Promise<void>((r) => requestAnimationFrame(() => requestAnimationFrame(() => r())));

export const heap = () => {
  const m = (performance as unknown as { memory?: { usedJSHeapSize: number } }).memory;
  return m ? m.usedJSHeapSize / 1e6 : null;
};

/** Eight zooms onto a window of the bars, the same for every candidate. */
export const ZOOMS: [number, number][] = [
  [0, 1],
  [0.25, 0.5],
  [0.4, 0.45],
  [0.1, 0.9],
  [0.5, 0.51],
  [0, 0.05],
  [0.7, 1],
  [0, 1],
];
