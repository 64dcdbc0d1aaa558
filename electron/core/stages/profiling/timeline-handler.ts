import { existsSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { StepTimeline } from '../../../../shared/stages/profiling/api';
import { AmwError } from '../../../../shared/errors';
import { msg } from '../../../../shared/api/text';
import type { ProfileRepository } from './repository';
import { stepTimeline } from './timeline';

/** A trace file's name, as the import knows them (trace_view.json, msprof_*.json, *.pt.trace.json). */
const isTrace = (f: string) =>
  basename(f) === 'trace_view.json' ||
  /^msprof_[\d_]+\.json$/.test(basename(f)) ||
  /\.pt\.trace\.json$/.test(f);

// the last few windows read, so moving between the views of one step does not read the file again
const recent = new Map<string, Promise<StepTimeline>>();
const KEEP = 2;

/** profiling.timeline: one step of the stored profile's trace, read from the profile's files. */
export function readTimeline(
  repo: ProfileRepository,
  runId: number,
  unit: number | null,
  step: number | undefined,
): Promise<StepTimeline> {
  const p = repo.get(runId);
  const dir = repo.filesDir(runId);
  const units = p.ranks
    .map((r, i) => ({ r, i, trace: r.files.find(isTrace) }))
    .filter((u) => u.trace !== undefined && (unit === null || u.i === unit));
  const u = units[0];
  if (!dir || !u)
    throw new AmwError('NOT_FOUND', msg('errors.text.noTrace', { id: runId }), {
      stageRunId: runId,
    });
  const rel = join(u.r.dir, u.trace!);
  const path = join(dir, rel);
  if (!existsSync(path))
    throw new AmwError('NOT_FOUND', msg('errors.text.traceGone', { path }), {
      path,
    });
  // keyed by the file itself (a core per data dir can share this process: tests, serve)
  const st = statSync(path);
  const key = `${path}\u0000${st.size}\u0000${st.mtimeMs}\u0000${step ?? ''}`;
  let got = recent.get(key);
  if (!got) {
    // the import noted where the steps are (profiles stored before it did: a first pass finds them)
    const windows = p.timeline?.stepWindows;
    const known = windows
      ? new Map(
          windows
            .filter((w) => w.file === rel)
            .map((w) => [w.step, { start: w.startUs, end: w.endUs }] as const),
        )
      : undefined;
    got = stepTimeline(path, rel, { step, known }).then((t) => ({ ...t, file: rel }));
    got.catch(() => recent.delete(key));
    recent.set(key, got);
    while (recent.size > KEEP) recent.delete(recent.keys().next().value!);
  }
  return got;
}
