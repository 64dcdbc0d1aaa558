import type { StepWindow } from '../../../../shared/stages/profiling/api';

/** A ProfilerStep#N marker's name. */
export const STEP = /^ProfilerStep#(\d+)$/;

export const numberOf = (v: unknown): number =>
  typeof v === 'number' ? v : typeof v === 'string' ? Number(v) : NaN;

/**
 * Where each ProfilerStep#N of each trace file is: from the earliest start to the latest end of
 * its markers (a step can have a marker on more than one thread). Noted by the import as the
 * events go by, so the timeline view reads a step's events in one pass over the file.
 */
export class StepWindows {
  private byFile = new Map<string, Map<number, { start: number; end: number }>>();

  add(file: string, step: number, ts: unknown, dur: unknown): void {
    const t = numberOf(ts);
    const d = numberOf(dur);
    if (!Number.isFinite(t) || !Number.isFinite(d)) return;
    let steps = this.byFile.get(file);
    if (!steps) this.byFile.set(file, (steps = new Map()));
    const s = steps.get(step);
    if (s) {
      s.start = Math.min(s.start, t);
      s.end = Math.max(s.end, t + d);
    } else steps.set(step, { start: t, end: t + d });
  }

  /** One file's steps, by id. */
  of(file: string): Map<number, { start: number; end: number }> {
    return this.byFile.get(file) ?? new Map();
  }

  list(): StepWindow[] {
    const out: StepWindow[] = [];
    for (const [file, steps] of this.byFile)
      for (const [step, w] of [...steps].sort((a, b) => a[0] - b[0]))
        out.push({ file, step, startUs: w.start, endUs: w.end });
    return out;
  }
}
