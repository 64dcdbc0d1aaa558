import type { ProfileWarning, StepTimeline } from '../../../../shared/stages/profiling/api';
import type { ParserChoice } from './csv-stream';
import { numberOf, STEP, StepWindows } from './step-windows';
import { streamTrace, type TraceEvent } from './trace-stream';

/**
 * One step of a trace_view.json in a compact columnar form for the timeline view: the events that
 * overlap the step's ProfilerStep#N (the whole trace when it has no step markers), as typed arrays
 * (start from the window's start, duration, name as an index into a string table), ordered so
 * that each lane — one nesting depth of one process/thread track — is a contiguous run sorted by
 * start. Events within a lane never overlap, so the renderer finds what is in view by binary
 * search and merges what is narrower than a pixel. One pass over the file when the import noted
 * where the steps are (else a first pass finds the markers); memory is the step's events only
 * (≤ maxEvents).
 */

export const MAX_TIMELINE_EVENTS = 2_000_000;

const idOf = (v: unknown): string =>
  typeof v === 'number' || typeof v === 'string' ? String(v) : '';

/** Grows by doubling: the step's event count is not known until it is read. */
class Column<T extends Float64Array | Uint32Array> {
  n = 0;
  constructor(
    public data: T,
    private readonly make: (size: number) => T,
  ) {}
  push(v: number) {
    if (this.n === this.data.length) {
      const bigger = this.make(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[this.n++] = v;
  }
}

const f64 = (n: number) => new Float64Array(n);
const u32 = (n: number) => new Uint32Array(n);

export async function stepTimeline(
  path: string,
  label: string,
  opts: {
    step?: number;
    maxEvents?: number;
    signal?: AbortSignal;
    parser?: ParserChoice;
    /** The steps' windows as the import noted them: one pass over the file instead of two. */
    known?: Map<number, { start: number; end: number }>;
  } = {},
): Promise<Omit<StepTimeline, 'file'>> {
  const warnings: ProfileWarning[] = [];
  const warn = (w: ProfileWarning) => void warnings.push(w);
  const max = opts.maxEvents ?? MAX_TIMELINE_EVENTS;
  // pass 1 (unless the import noted them): where each step is
  let steps = opts.known;
  if (!steps) {
    const found = new StepWindows();
    await streamTrace(
      path,
      label,
      warn,
      (e: TraceEvent) => {
        if (e.ph !== 'X' || typeof e.name !== 'string') return;
        const mm = STEP.exec(e.name);
        if (mm) found.add(label, Number(mm[1]), e.ts, e.dur);
      },
      opts.signal,
      opts.parser,
    );
    steps = found.of(label);
  }
  const ids = [...steps.keys()].sort((a, b) => a - b);
  const step = opts.step !== undefined && steps.has(opts.step) ? opts.step : (ids[0] ?? null);
  const window = step !== null ? steps.get(step)! : { start: -Infinity, end: Infinity };

  // pass 2: the window's complete events, and the names of processes and threads
  const ts = new Column(f64(1 << 16), f64);
  const dur = new Column(f64(1 << 16), f64);
  const track = new Column(u32(1 << 16), u32);
  const name = new Column(u32(1 << 16), u32);
  const names: string[] = [];
  const nameIx = new Map<string, number>();
  const tracks: { pid: string; tid: string }[] = [];
  const trackIx = new Map<string, number>();
  const processNames = new Map<string, string>();
  const threadNames = new Map<string, string>();
  let truncated = false;
  let minTs = Infinity;
  let maxEnd = -Infinity;
  warnings.length = 0; // the second pass says the same again
  await streamTrace(
    path,
    label,
    warn,
    (e: TraceEvent) => {
      if (e.ph === 'M') {
        const a = e.args as { name?: unknown } | undefined;
        if (typeof a?.name !== 'string') return;
        if (e.name === 'process_name') processNames.set(idOf(e.pid), a.name);
        else if (e.name === 'thread_name')
          threadNames.set(`${idOf(e.pid)}\u0000${idOf(e.tid)}`, a.name);
        return;
      }
      if (e.ph !== 'X') return;
      const t = numberOf(e.ts);
      const d = Math.max(0, numberOf(e.dur) || 0);
      if (!Number.isFinite(t) || t >= window.end || t + d <= window.start) return;
      if (ts.n >= max) {
        truncated = true;
        return;
      }
      const pid = idOf(e.pid);
      const tid = idOf(e.tid);
      const key = `${pid}\u0000${tid}`;
      let k = trackIx.get(key);
      if (k === undefined) {
        k = tracks.length;
        tracks.push({ pid, tid });
        trackIx.set(key, k);
      }
      const nm = typeof e.name === 'string' ? e.name : '';
      let ni = nameIx.get(nm);
      if (ni === undefined) {
        ni = names.length;
        names.push(nm);
        nameIx.set(nm, ni);
      }
      ts.push(t);
      dur.push(d);
      track.push(k);
      name.push(ni);
      if (t < minTs) minTs = t;
      if (t + d > maxEnd) maxEnd = t + d;
    },
    opts.signal,
    opts.parser,
  );
  const n = ts.n;
  const startUs = step !== null ? window.start : n ? minTs : 0;
  const endUs = step !== null ? window.end : n ? maxEnd : 0;

  // order: by track, then start (longer first on a tie, so a parent comes before its child)
  const byTrack: number[][] = tracks.map(() => []);
  for (let i = 0; i < n; i++) byTrack[track.data[i]!]!.push(i);
  const order = new Uint32Array(n);
  const depth = new Uint32Array(n);
  const lanes: StepTimeline['lanes'] = [];
  let at = 0;
  for (const [tk, idx] of byTrack.entries()) {
    idx.sort((a, b) => ts.data[a]! - ts.data[b]! || dur.data[b]! - dur.data[a]!);
    // nesting depth: a stack of the ends of the events still open
    const open: number[] = [];
    let deepest = 0;
    for (const i of idx) {
      const s = ts.data[i]!;
      while (open.length && open[open.length - 1]! <= s) open.pop();
      depth[i] = open.length;
      if (open.length + 1 > deepest) deepest = open.length + 1;
      open.push(s + dur.data[i]!);
    }
    // each depth a contiguous lane, still sorted by start (a counting sort by depth is stable)
    const counts = new Uint32Array(deepest + 1);
    for (const i of idx) counts[depth[i]! + 1]!++;
    for (let d = 1; d <= deepest; d++) counts[d]! += counts[d - 1]!;
    for (let d = 0; d < deepest; d++)
      if (counts[d + 1]! > counts[d]!)
        lanes.push({ track: tk, depth: d, from: at + counts[d]!, to: at + counts[d + 1]! });
    for (const i of idx) order[at + counts[depth[i]!]!++] = i;
    at += idx.length;
  }
  const start = new Float64Array(n);
  const durs = new Float32Array(n);
  const nameCol = new Uint32Array(n);
  for (let j = 0; j < n; j++) {
    const i = order[j]!;
    start[j] = ts.data[i]! - startUs;
    durs[j] = dur.data[i]!;
    nameCol[j] = name.data[i]!;
  }
  const b64 = (a: ArrayBufferView) =>
    Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString('base64');
  return {
    steps: ids,
    step,
    startUs,
    endUs,
    tracks: tracks.map((t) => ({
      ...t,
      name: [processNames.get(t.pid) ?? t.pid, threadNames.get(`${t.pid}\u0000${t.tid}`) ?? t.tid]
        .filter(Boolean)
        .join(' · '),
    })),
    lanes,
    names,
    events: n,
    start: b64(start),
    dur: b64(durs),
    name: b64(nameCol),
    truncated,
    warnings,
  };
}
