// The timeline's drawing on a recording stand-in for the canvas (a test double: no canvas in
// node): what a user sees — every event in view covered, sub-pixel events merged so a frame draws
// at most a few rectangles per pixel, the tooltip finding the event under the pointer.
import { describe, expect, it } from 'vitest';
import {
  GUTTER,
  AXIS_H,
  LANE_H,
  draw,
  hit,
  pan,
  zoom,
  type TimelineModel,
  type View,
} from './timeline-draw';

/** Records fillRect calls; everything else a 2D context does is a no-op here. */
function recordingContext() {
  const rects: { x: number; y: number; w: number; h: number; fill: string }[] = [];
  let fill = '';
  const ctx = {
    rects,
    set fillStyle(v: string) {
      fill = v;
    },
    get fillStyle() {
      return fill;
    },
    fillRect: (x: number, y: number, w: number, h: number) => void rects.push({ x, y, w, h, fill }),
    clearRect: () => {},
    fillText: () => {},
    beginPath: () => {},
    moveTo: () => {},
    lineTo: () => {},
    stroke: () => {},
    font: '',
    textBaseline: '',
    strokeStyle: '',
  };
  return ctx;
}

/** One lane of `n` back-to-back events of `dur` µs, `gap` apart. */
function model(n: number, dur: number, gap: number): TimelineModel {
  const start = new Float64Array(n);
  const d = new Float32Array(n);
  const name = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    start[i] = i * (dur + gap);
    d[i] = dur;
    name[i] = i % 3;
  }
  return {
    start,
    dur: d,
    name,
    names: ['a', 'b', '<img src=x onerror=alert(1)>'],
    lanes: [{ track: 0, depth: 0, from: 0, to: n }],
    tracks: [{ pid: '1', tid: '2', name: 'Ascend Hardware · 2' }],
    spanUs: n * (dur + gap),
  };
}

const COLOURS = { text: '#000', muted: '#555', border: '#ccc', background: '#fff' };
const WIDTH = GUTTER + 1000;
const events = (r: ReturnType<typeof recordingContext>['rects']) =>
  r.filter((x) => x.y >= AXIS_H && x.x >= GUTTER);

describe('timeline drawing', () => {
  it('a million events zoomed out: merged into blocks, at most one per pixel, covering the span', () => {
    const m = model(1_000_000, 1, 0.5);
    const ctx = recordingContext();
    const v: View = { t0: 0, t1: m.spanUs, row: 0 };
    const n = draw(ctx as unknown as CanvasRenderingContext2D, m, v, WIDTH, 400, COLOURS);
    const rs = events(ctx.rects);
    expect(n).toBe(rs.length);
    expect(rs.length).toBeLessThanOrEqual(1000);
    // the blocks cover the plot from its left to its right edge with no hole
    const covered = new Set<number>();
    for (const r of rs) for (let x = Math.floor(r.x); x < r.x + r.w; x++) covered.add(x - GUTTER);
    expect(covered.size).toBeGreaterThanOrEqual(999);
  });

  it('zoomed in: each event its own rectangle where it is, no more than those in view', () => {
    const m = model(1_000_000, 1, 0.5);
    const ctx = recordingContext();
    // 10 events of 1 µs every 1.5 µs across 1000 px: 100 px each, at 0, 150, 300 … px
    const v: View = { t0: 3000, t1: 3015, row: 0 };
    draw(ctx as unknown as CanvasRenderingContext2D, m, v, WIDTH, 400, COLOURS);
    const rs = events(ctx.rects);
    expect(rs).toHaveLength(10);
    expect(rs.map((r) => Math.round(r.x - GUTTER))).toEqual([
      0, 100, 200, 300, 400, 500, 600, 700, 800, 900,
    ]);
    // 1 µs at 66.7 px/µs, less the half pixel that keeps neighbours apart
    expect(rs.map((r) => Math.round(r.w))).toEqual(Array(10).fill(66));
  });

  it('the event under the pointer, and nothing in a gap or off the lanes', () => {
    const m = model(100, 10, 10);
    const v: View = { t0: 0, t1: 2000, row: 0 }; // 0.5 px per µs
    const y = AXIS_H + LANE_H / 2;
    expect(hit(m, v, WIDTH, GUTTER + 25 * 0.5, y)).toBe(1); // 25 µs: in event 1 (20–30)
    expect(hit(m, v, WIDTH, GUTTER + 500 * 0.5, y)).toBe(25);
    expect(hit(m, v, WIDTH, GUTTER + 15 * 0.5, AXIS_H + LANE_H * 3)).toBeNull(); // no such lane
    expect(hit(m, v, WIDTH, 10, y)).toBeNull(); // the track labels
    // zoomed in, a gap is a gap
    expect(hit(m, { t0: 0, t1: 40, row: 0 }, WIDTH, GUTTER + 15 * 25, y)).toBeNull();
  });

  it('zoom keeps the time under the pointer and stays within the step; pan stops at its ends', () => {
    const v: View = { t0: 0, t1: 1000, row: 0 };
    const z = zoom(v, 0.5, 250, 1000);
    expect(z.t1 - z.t0).toBe(500);
    expect((250 - z.t0) / (z.t1 - z.t0)).toBeCloseTo(0.25);
    expect(zoom(z, 10, 250, 1000)).toEqual({ t0: 0, t1: 1000, row: 0 });
    expect(pan(z, -1e9, 0, 1000, 4)).toEqual({ t0: 0, t1: 500, row: 0 });
    expect(pan(z, 1e9, 9, 1000, 4)).toEqual({ t0: 500, t1: 1000, row: 3 });
  });
});
