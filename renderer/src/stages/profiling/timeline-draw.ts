import type { StepTimeline } from '../../../../shared/stages/profiling/api';

/**
 * The step timeline's model and drawing, apart from React so a frame costs only what is in view.
 * Each lane (one depth of one track) is a contiguous run of events sorted by start that never
 * overlap, so ends are sorted too: what is in view is found by binary search, and a run of events
 * narrower than a pixel is drawn as one merged block after one more binary search — a frame is
 * O(pixels × lanes × log n), not O(events), which keeps a million events smooth.
 */
export interface TimelineModel {
  start: Float64Array;
  dur: Float32Array;
  name: Uint32Array;
  names: string[];
  lanes: StepTimeline['lanes'];
  tracks: StepTimeline['tracks'];
  /** The window's length, µs. */
  spanUs: number;
}

function bytes(b64: string): ArrayBuffer {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out.buffer;
}

export function decodeTimeline(t: StepTimeline): TimelineModel {
  return {
    start: new Float64Array(bytes(t.start)),
    dur: new Float32Array(bytes(t.dur)),
    name: new Uint32Array(bytes(t.name)),
    names: t.names,
    lanes: t.lanes,
    tracks: t.tracks,
    spanUs: Math.max(t.endUs - t.startUs, 1),
  };
}

/** The first index in [lo, hi) whose event ends after t (ends are sorted within a lane). */
export function firstEndingAfter(m: TimelineModel, lo: number, hi: number, t: number): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (m.start[mid]! + m.dur[mid]! > t) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** What the canvas shows: [t0, t1) µs from the window's start, and the first lane row shown. */
export interface View {
  t0: number;
  t1: number;
  row: number;
}

export const LANE_H = 16;
export const AXIS_H = 22;
export const GUTTER = 180;

const PALETTE = [
  '#4e79a7',
  '#f28e2b',
  '#59a14f',
  '#b07aa1',
  '#76b7b2',
  '#edc948',
  '#e15759',
  '#9c755f',
  '#ff9da7',
  '#86bcb6',
];
const MERGED = '#8c959f';

/** A lane row of the canvas: the lane, and whether it starts a track (where its label goes). */
export function rows(m: TimelineModel): { lane: number; first: boolean }[] {
  return m.lanes.map((l, i) => ({ lane: i, first: i === 0 || m.lanes[i - 1]!.track !== l.track }));
}

/** A tick step of 1, 2 or 5 × 10^k µs, about `px` pixels apart. */
export function tickStep(usPerPx: number, px = 110): number {
  const raw = usPerPx * px;
  const p = 10 ** Math.floor(Math.log10(raw));
  return raw / p < 2 ? p : raw / p < 5 ? 2 * p : 5 * p;
}

export const fmtUs = (us: number) =>
  Math.abs(us) >= 1000
    ? `${(us / 1000).toFixed(us % 1000 === 0 ? 0 : 2)} ms`
    : `${+us.toFixed(2)} µs`;

/**
 * Draws the view; returns how many rectangles it drew (events and merged blocks), which the
 * bench prints and a test can check against the events in view.
 */
export function draw(
  ctx: CanvasRenderingContext2D,
  m: TimelineModel,
  v: View,
  width: number,
  height: number,
  colours: { text: string; muted: string; border: string; background: string },
): number {
  ctx.clearRect(0, 0, width, height);
  const plotW = Math.max(width - GUTTER, 1);
  const scale = plotW / (v.t1 - v.t0); // px per µs
  const laneRows = rows(m);
  const visible = Math.ceil((height - AXIS_H) / LANE_H);
  let drawn = 0;
  ctx.font = '11px system-ui, sans-serif';
  ctx.textBaseline = 'middle';
  for (let r = v.row; r < Math.min(laneRows.length, v.row + visible); r++) {
    const lane = m.lanes[laneRows[r]!.lane]!;
    const y = AXIS_H + (r - v.row) * LANE_H;
    let i = firstEndingAfter(m, lane.from, lane.to, v.t0);
    while (i < lane.to && m.start[i]! < v.t1) {
      const s = m.start[i]!;
      const x0 = (s - v.t0) * scale;
      const x1 = (s + m.dur[i]! - v.t0) * scale;
      if (x1 - x0 >= 1) {
        const a = Math.max(x0, 0);
        const b = Math.min(x1, plotW);
        ctx.fillStyle = PALETTE[m.name[i]! % PALETTE.length]!;
        ctx.fillRect(GUTTER + a, y + 1, Math.max(b - a - 0.5, 1), LANE_H - 2);
        if (b - a > 40) {
          const label = m.names[m.name[i]!] ?? '';
          const fit = Math.floor((b - a - 6) / 6.2);
          ctx.fillStyle = '#fff';
          ctx.fillText(
            label.length > fit ? `${label.slice(0, Math.max(fit - 1, 0))}…` : label,
            GUTTER + a + 3,
            y + LANE_H / 2,
          );
        }
        drawn++;
        i++;
        continue;
      }
      // narrower than a pixel: merge every event that ends within the pixels it and its
      // neighbours cover into one block (level of detail), found by binary search
      const px0 = Math.floor(Math.max(x0, 0));
      let px1 = px0 + 1;
      for (;;) {
        px1 = Math.max(px1, Math.ceil((m.start[i]! + m.dur[i]! - v.t0) * scale));
        const j = firstEndingAfter(m, i, lane.to, v.t0 + px1 / scale);
        i = j > i ? j : i + 1; // an end that rounds onto the pixel's edge still moves on
        if (i >= lane.to) break;
        const nx0 = (m.start[i]! - v.t0) * scale;
        const nx1 = (m.start[i]! + m.dur[i]! - v.t0) * scale;
        // the next event joins the block if it is tiny too and starts by the block's next pixel
        if (!(nx1 - nx0 < 1 && nx0 < px1 + 1 && nx0 < plotW)) break;
      }
      ctx.fillStyle = MERGED;
      ctx.fillRect(GUTTER + px0, y + 1, Math.min(px1, plotW) - px0, LANE_H - 2);
      drawn++;
    }
  }
  // the track labels and the axis over the events
  ctx.fillStyle = colours.background;
  ctx.fillRect(0, 0, GUTTER, height);
  ctx.fillRect(0, 0, width, AXIS_H);
  ctx.fillStyle = colours.text;
  for (let r = v.row; r < Math.min(laneRows.length, v.row + visible); r++) {
    if (!laneRows[r]!.first) continue;
    const name = m.tracks[m.lanes[laneRows[r]!.lane]!.track]!.name;
    const fit = Math.floor((GUTTER - 8) / 6.2);
    ctx.fillText(
      name.length > fit ? `${name.slice(0, fit - 1)}…` : name,
      4,
      AXIS_H + (r - v.row) * LANE_H + LANE_H / 2,
    );
  }
  const step = tickStep(1 / scale);
  ctx.strokeStyle = colours.border;
  ctx.fillStyle = colours.muted;
  ctx.beginPath();
  for (let t = Math.ceil(v.t0 / step) * step; t < v.t1; t += step) {
    const x = GUTTER + (t - v.t0) * scale;
    ctx.moveTo(x, AXIS_H - 6);
    ctx.lineTo(x, AXIS_H);
    ctx.fillText(fmtUs(t), x + 2, AXIS_H / 2 - 1);
  }
  ctx.moveTo(0, AXIS_H - 0.5);
  ctx.lineTo(width, AXIS_H - 0.5);
  ctx.stroke();
  return drawn;
}

/** The event under (x, y) of the canvas, or null (within 2 px when zoomed out). */
export function hit(m: TimelineModel, v: View, width: number, x: number, y: number): number | null {
  if (x < GUTTER || y < AXIS_H) return null;
  const r = v.row + Math.floor((y - AXIS_H) / LANE_H);
  const row = rows(m)[r];
  if (!row) return null;
  const lane = m.lanes[row.lane]!;
  const scale = Math.max(width - GUTTER, 1) / (v.t1 - v.t0);
  const t = v.t0 + (x - GUTTER) / scale;
  const slack = 2 / scale;
  const i = firstEndingAfter(m, lane.from, lane.to, t - slack);
  if (i < lane.to && m.start[i]! <= t + slack) return i;
  return null;
}

/** Zoom by `factor` (< 1 zooms in) around time `at`, kept within the window. */
export function zoom(v: View, factor: number, at: number, span: number): View {
  const min = 0.01; // 10 ns across the canvas is as far in as it goes
  let w = Math.min(Math.max((v.t1 - v.t0) * factor, min), span);
  const f = (at - v.t0) / (v.t1 - v.t0);
  let t0 = at - f * w;
  t0 = Math.min(Math.max(t0, 0), span - w);
  if (w > span) w = span;
  return { ...v, t0, t1: t0 + w };
}

/** Pan by `dt` µs and `dr` rows, kept within the window and the lanes. */
export function pan(v: View, dt: number, dr: number, span: number, laneCount: number): View {
  const w = v.t1 - v.t0;
  const t0 = Math.min(Math.max(v.t0 + dt, 0), Math.max(span - w, 0));
  const row = Math.min(Math.max(v.row + dr, 0), Math.max(laneCount - 1, 0));
  return { t0, t1: t0 + w, row };
}
