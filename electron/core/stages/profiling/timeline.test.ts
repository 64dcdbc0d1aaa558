// One step of a trace as the timeline view gets it: the step's events only, in lanes that never
// overlap, names through the string table, through the stage's API on a stored import.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { StepTimeline } from '../../../../shared/stages/profiling/api';
import { stepTimeline } from './timeline';
import { REFERENCE } from '../../../../tests/support/reference';

const F = `${REFERENCE}/fixtures/profiling`;
const tmp = mkdtempSync(join(tmpdir(), 'amw-prof-tl-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** The columns decoded as the renderer decodes them, one object per event (for assertions). */
function decode(t: Omit<StepTimeline, 'file'>) {
  const bytes = (s: string) => {
    const b = Buffer.from(s, 'base64');
    return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
  };
  const start = new Float64Array(bytes(t.start));
  const dur = new Float32Array(bytes(t.dur));
  const name = new Uint32Array(bytes(t.name));
  return t.lanes.map((l) => ({
    track: t.tracks[l.track]!.name,
    depth: l.depth,
    events: Array.from({ length: l.to - l.from }, (_, k) => ({
      name: t.names[name[l.from + k]!],
      start: start[l.from + k],
      dur: dur[l.from + k],
    })),
  }));
}

const x = (name: string, pid: number | string, tid: number, ts: number | string, dur: number) =>
  ({ ph: 'X', name, pid, tid, ts, dur, cat: 'cpu_op' }) as const;

const TRACE = [
  { ph: 'M', name: 'process_name', pid: 1, tid: 0, args: { name: 'Python' } },
  { ph: 'M', name: 'thread_name', pid: 1, tid: 7, args: { name: 'MainThread' } },
  { ph: 'M', name: 'process_name', pid: 9, tid: 0, args: { name: 'Ascend Hardware' } },
  x('ProfilerStep#1', 1, 7, '1000.500', 100),
  x('aten::linear', 1, 7, '1001.500', 40),
  x('aten::matmul', 1, 7, '1002.500', 30),
  x('aten::relu', 1, 7, '1050.500', 10),
  x('MatMulV3', 9, 2, 1010, 20),
  x('MatMulV3', 9, 2, 1095, 20), // crosses the step's end: still in it
  x('ProfilerStep#2', 1, 7, '1100.500', 50),
  x('aten::add', 1, 7, '1110.500', 5),
  { ph: 'C', name: 'AI Core Freq', pid: 5, tid: 0, ts: 1020, args: { MHz: 1800 } },
];

describe('stepTimeline', () => {
  const path = join(tmp, 'trace_view.json');
  writeFileSync(path, JSON.stringify(TRACE));

  it('the first step by default: its events in lanes by track and depth, starts from the step', async () => {
    const t = await stepTimeline(path, 'trace_view.json');
    expect(t.steps).toEqual([1, 2]);
    expect(t.step).toBe(1);
    expect([t.startUs, t.endUs]).toEqual([1000.5, 1100.5]);
    expect(t.events).toBe(6);
    expect(decode(t)).toEqual([
      {
        track: 'Python · MainThread',
        depth: 0,
        events: [{ name: 'ProfilerStep#1', start: 0, dur: 100 }],
      },
      {
        track: 'Python · MainThread',
        depth: 1,
        events: [
          { name: 'aten::linear', start: 1, dur: 40 },
          { name: 'aten::relu', start: 50, dur: 10 },
        ],
      },
      {
        track: 'Python · MainThread',
        depth: 2,
        events: [{ name: 'aten::matmul', start: 2, dur: 30 }],
      },
      {
        track: 'Ascend Hardware · 2',
        depth: 0,
        events: [
          { name: 'MatMulV3', start: 9.5, dur: 20 },
          { name: 'MatMulV3', start: 94.5, dur: 20 },
        ],
      },
    ]);
    expect(t.warnings).toEqual([]);
  });

  it('another step by its id; the same figures through the maintained parser', async () => {
    const t = await stepTimeline(path, 'trace_view.json', { step: 2 });
    expect(t.step).toBe(2);
    // tracks in the order the window first meets them: the kernel that ran over from step 1 first
    expect(decode(t).flatMap((l) => l.events.map((e) => e.name))).toEqual([
      'MatMulV3',
      'ProfilerStep#2',
      'aten::add',
    ]);
    expect(await stepTimeline(path, 'trace_view.json', { step: 2, parser: 'reference' })).toEqual(
      t,
    );
  });

  it('more events than the cap: the first ones, and it says so', async () => {
    const t = await stepTimeline(path, 'trace_view.json', { maxEvents: 3 });
    expect(t.events).toBe(3);
    expect(t.truncated).toBe(true);
  });

  it('a trace without step markers (the fixture): the whole trace, process names on the tracks', async () => {
    const t = await stepTimeline(join(F, 'trace_view_small/trace_view.json'), 'trace_view.json');
    expect(t.steps).toEqual([]);
    expect(t.step).toBeNull();
    expect(t.events).toBe(4);
    expect(t.startUs).toBe(Number('1742490378358140.950')); // as the file writes it: a string
    expect(t.tracks.map((k) => k.name).sort()).toEqual([
      'Ascend Hardware · 383683',
      'CANN · 383681',
      'CANN · 383682',
      'CANN · 383683',
    ]);
  });

  it('a trace cut off mid-array: the events before the cut, and a warning naming the file', async () => {
    const cut = join(tmp, 'cut.json');
    const text = JSON.stringify(TRACE);
    writeFileSync(cut, text.slice(0, text.indexOf('aten::relu') + 20));
    const t = await stepTimeline(cut, 'rank0/trace_view.json');
    expect(t.events).toBe(3); // the step, linear and matmul; relu is cut
    expect(t.warnings.map((w) => [w.file, w.line, w.message.key])).toEqual([
      ['rank0/trace_view.json', 1, 'stage-profiling:warn.truncated'],
    ]);
  });
});

describe('profiling.timeline on a stored import', () => {
  it('reads the step from the imported folder; a run without a trace is NOT_FOUND', async () => {
    const { createCore } = await import('../../api/core');
    const home = mkdtempSync(join(tmp, 'home-'));
    const dir = join(tmp, 'imp', 'ASCEND_PROFILER_OUTPUT');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'trace_view.json'), JSON.stringify(TRACE));
    const core = createCore({ env: { AMW_HOME: home } as NodeJS.ProcessEnv });
    try {
      const a = await core.call('profiling.import', { dir: join(tmp, 'imp') });
      expect((await core.jobs.wait(a.jobId)).status).toBe('succeeded');
      const t = await core.call('profiling.timeline', { stageRunId: a.stageRunId, step: 2 });
      expect(t.file).toBe('ASCEND_PROFILER_OUTPUT/trace_view.json');
      expect(t.step).toBe(2);
      expect(t.events).toBe(3);
      // the import noted where the steps are, so the view reads the file once
      const p = await core.call('profiling.get', { stageRunId: a.stageRunId });
      expect(p.timeline!.stepWindows).toEqual([
        { file: 'ASCEND_PROFILER_OUTPUT/trace_view.json', step: 1, startUs: 1000.5, endUs: 1100.5 },
        { file: 'ASCEND_PROFILER_OUTPUT/trace_view.json', step: 2, startUs: 1100.5, endUs: 1150.5 },
      ]);
      const b = await core.call('profiling.import', {
        dir: join(F, 'msprof_op_summary_cann7'),
      });
      await core.jobs.wait(b.jobId);
      await expect(
        core.call('profiling.timeline', { stageRunId: b.stageRunId }),
      ).rejects.toMatchObject({
        code: 'NOT_FOUND',
      });
    } finally {
      await core.close();
    }
  }, 60_000);
});
