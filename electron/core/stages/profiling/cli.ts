import type { Text } from '../../../../shared/api';
import type { ProfileResult } from '../../../../shared/stages/profiling/api';
import { textIn } from '../../i18n';
import type { StageCli } from '../define';

/** The documented `--json` document of an import or a run (texts in the CLI's language). */
export function profileDocument(r: ProfileResult, show: (t: Text) => string) {
  return {
    source: r.source,
    kind: r.kind,
    ranks: r.ranks,
    kernels: r.kernels
      ? {
          count: r.kernels.count,
          totalUs: r.kernels.totalUs,
          byTaskType: Object.fromEntries(
            Object.entries(r.kernels.byTaskType).map(([k, v]) => [k, { us: v.us, share: v.share }]),
          ),
          byOpType: Object.fromEntries(
            Object.entries(r.kernels.byOpType).map(([k, v]) => [
              k,
              { us: v.us, share: v.share, count: v.count, taskType: v.taskType },
            ]),
          ),
          top: r.kernels.top,
        }
      : null,
    steps: r.steps.map((s) => ({
      rank: s.rank,
      step: s.step,
      computingUs: s.computingUs,
      communicationNotOverlappedUs: s.communicationNotOverlappedUs,
      overlappedUs: s.overlappedUs,
      freeUs: s.freeUs,
      bubbleUs: s.bubbleUs,
    })),
    stepTimes: r.stepTimes,
    advice: r.advice.map((a) => ({
      id: a.id,
      severity: a.severity,
      message: show(a.message),
      suggestion: show(a.suggestion),
      share: a.share,
      evidence: a.evidence,
    })),
    warnings: r.warnings.map((w) => ({ file: w.file, line: w.line, message: show(w.message) })),
  };
}

/** `amw run HOST --stage profiling --entry FILE:FUNCTION [--steps N] [--level L] [--baseline-run RUN]` */
export const profilingCli: StageCli = {
  options: [
    { flags: '--entry <file:function>', key: 'entry', help: 'cli.opt.entry' },
    { flags: '--script <file>', key: 'script', help: 'cli.opt.script' },
    { flags: '--backward', key: 'backward', help: 'cli.opt.backward' },
    { flags: '--steps <n>', key: 'steps', help: 'stage-profiling:cli.steps' },
    { flags: '--level <level>', key: 'level', help: 'stage-profiling:cli.level' },
    { flags: '--baseline-run <run>', key: 'baselineRun', help: 'stage-profiling:cli.baseline' },
    { flags: '--target-ratio <x>', key: 'targetRatio', help: 'stage-profiling:cli.targetRatio' },
  ],
  input: (o) => ({
    entry: o.entry,
    script: o.script,
    backward: o.backward,
    steps: o.steps === undefined ? undefined : Number(o.steps),
    level: o.level,
    baseline: o.baselineRun === undefined ? undefined : Number(o.baselineRun),
    targetRatio: o.targetRatio === undefined ? undefined : Number(o.targetRatio),
  }),
  async json(run, call, stageRunId) {
    const r = await call('profiling.get', { stageRunId }).catch(() => null);
    return {
      session: run.session,
      stage: run.stage,
      host: run.host,
      status: run.status,
      stageRunId,
      profiler: r?.profiler ?? null,
      ...(r
        ? // the stage's document has no language of its own: advice reads in English here
          profileDocument(r, textIn('en'))
        : {
            source: null,
            kind: null,
            ranks: [],
            kernels: null,
            steps: [],
            advice: [],
            warnings: [],
          }),
      checks: run.checks.map((c) => ({ id: c.id, status: c.status, summary: c.summary })),
    };
  },
};
