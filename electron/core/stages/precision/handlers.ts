import { existsSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { AmwError } from '../../../../shared/errors';
import { msg } from '../../../../shared/api/text';
import type { DumpSide, PrecisionRunView, RawDump } from '../../../../shared/stages/precision/api';
import type { DomainHandlers, MethodsOf, Services } from '../../api/services';
import { stageStatus } from '../../sessions/repository';
import { label } from './compare';
import { importMsprobe } from './msprobe';
import { importOutcomes } from './outcomes';
import { PrecisionRepository } from './repository';
import { compareRuns } from './runs-compare';

/** The first divergence's file in the session's newest code scan that has it, for a link into the review. */
function reviewLink(s: Services, sessionId: number, view: PrecisionRunView): PrecisionRunView {
  const first = view.firstDivergence;
  const at = first?.source ? /^(.*):(\d+)$/.exec(first.source) : null;
  if (!first || !at) return view;
  const file = at[1]!.replace(/^\.\//, '');
  for (const scan of s.code.list(sessionId)) {
    const hit = s.code
      .get(scan.id)
      .fileList.find(
        (f) =>
          f.hasText &&
          (f.file === file || f.file.endsWith(`/${file}`) || file.endsWith(`/${f.file}`)),
      );
    if (hit)
      return {
        ...view,
        firstDivergence: {
          ...first,
          review: { scanId: scan.id, file: hit.file, line: Number(at[2]) },
        },
      };
  }
  return view;
}

/** Records shown without a module: enough for a look, bounded for a 10,000-module dump. */
const DUMP_RECORDS = 200;

/** One side's dump narrowed to a module's records (by row name, else by path for every call). */
function dumpSide(d: RawDump | null, module: string | undefined): DumpSide | null {
  if (!d) return null;
  const { modules, ...head } = d;
  const all = modules ?? [];
  // a row's name first (its call, forward or grad); else a path: every call of that module
  const byLabel = module === undefined ? [] : all.filter((r) => label(r) === module);
  const picked =
    module === undefined
      ? all.slice(0, DUMP_RECORDS)
      : byLabel.length
        ? byLabel
        : all.filter((r) => r.module === module);
  return { ...head, modules: picked, total: all.length };
}

/** The precision stage's own methods: a stored comparison, a session's history, msprobe import. */
export function precisionHandlers(s: Services): DomainHandlers<MethodsOf<'precision'>> {
  const repo = new PrecisionRepository(s.db, s.artifacts);
  return {
    'precision.get': ({ stageRunId }) => {
      const run = s.sessions.run(stageRunId);
      return reviewLink(s, run.sessionId, repo.get(stageRunId, run.host));
    },
    'precision.dumps': ({ stageRunId, module }) => {
      s.sessions.run(stageRunId);
      if (!repo.has(stageRunId))
        throw new AmwError('NOT_FOUND', msg('errors.text.noPrecision', { id: stageRunId }));
      const d = repo.dumps(stageRunId);
      return { baseline: dumpSide(d.baseline, module), target: dumpSide(d.target, module) };
    },
    'precision.history': ({ sessionId }) => {
      s.sessions.session(sessionId);
      return repo.history(sessionId);
    },
    'precision.compareRuns': ({ a, b }) => {
      const side = (id: number) => ({
        row: repo.row(id),
        view: repo.get(id, s.sessions.run(id).host),
      });
      return compareRuns(side(a), side(b));
    },
    'precision.import': async ({ path, sessionId, project }) => {
      const full = resolve(path);
      if (!existsSync(full))
        throw new AmwError('NOT_FOUND', msg('errors.text.pathMissing', { path }), { path });
      if (sessionId) s.sessions.session(sessionId);
      const imp = await importMsprobe(full);
      const sid = sessionId ?? s.sessions.createSession({ project });
      const runId = s.sessions.startRun(sid, 'precision', {
        hostId: null,
        target: 'msprobe',
        addHosts: [],
      });
      try {
        repo.save(
          runId,
          {
            source: 'import',
            baseline: 'msprobe',
            entry: basename(full),
            backward: imp.modules.some((m) => m.kind === 'grad'),
            inputsSha256: null,
            baselineSnapshotId: null,
            targetSnapshotId: null,
            dumps: null,
            problems: imp.problems,
          },
          imp,
        );
        const outcomes = importOutcomes({
          path: basename(full),
          files: imp.files,
          problems: imp.problems,
          result: imp,
          config: imp.config,
        });
        s.sessions.finishRun(runId, stageStatus(outcomes), outcomes);
      } catch (err) {
        s.sessions.markRun(runId, 'error');
        throw err;
      }
      return { sessionId: sid, stageRunId: runId, problems: imp.problems, files: imp.files };
    },
  };
}
