import type { StageCli } from '../define';
import { profilingCommands } from './cli-commands';
import { profileDocument } from './document';

/** `amw run HOST --stage profiling --entry FILE:FUNCTION [--steps N] [--level L] [--ranks-per-host N|npus] [--activities cpu,npu] [--baseline-run RUN]` */
export const profilingCli: StageCli = {
  options: [
    { flags: '--entry <file:function>', key: 'entry', help: 'cli.opt.entry' },
    { flags: '--script <file>', key: 'script', help: 'cli.opt.script' },
    { flags: '--backward', key: 'backward', help: 'cli.opt.backward' },
    { flags: '--steps <n>', key: 'steps', help: 'stage-profiling:cli.steps' },
    { flags: '--level <level>', key: 'level', help: 'stage-profiling:cli.level' },
    {
      flags: '--ranks-per-host <n|npus>',
      key: 'ranksPerHost',
      help: 'stage-profiling:cli.ranksPerHost',
    },
    { flags: '--activities <list>', key: 'activities', help: 'stage-profiling:cli.activities' },
    { flags: '--baseline-run <run>', key: 'baselineRun', help: 'stage-profiling:cli.baseline' },
    { flags: '--target-ratio <x>', key: 'targetRatio', help: 'stage-profiling:cli.targetRatio' },
  ],
  input: (o) => ({
    entry: o.entry,
    script: o.script,
    backward: o.backward,
    steps: o.steps === undefined ? undefined : Number(o.steps),
    level: o.level,
    ranksPerHost:
      o.ranksPerHost === undefined
        ? undefined
        : o.ranksPerHost === 'npus'
          ? 'npus'
          : Number(o.ranksPerHost),
    activities:
      typeof o.activities === 'string'
        ? o.activities
            .split(',')
            .map((x) => x.trim())
            .filter(Boolean)
        : undefined,
    baseline: o.baselineRun === undefined ? undefined : Number(o.baselineRun),
    targetRatio: o.targetRatio === undefined ? undefined : Number(o.targetRatio),
  }),
  commands: profilingCommands,
  groups: { profile: 'stage-profiling:cli.profile' },
  async json(run, call, stageRunId, show) {
    const r = await call('profiling.get', { stageRunId }).catch(() => null);
    return {
      session: run.session,
      stage: run.stage,
      host: run.host,
      status: run.status,
      stageRunId,
      profiler: r?.profiler ?? null,
      ...(r
        ? profileDocument(r, show)
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
