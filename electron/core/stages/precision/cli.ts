import type { StageCli } from '../define';

/**
 * `amw run TARGET --stage precision --baseline B --entry FILE:FUNCTION [--dtype] [--mode]
 * [--backward] [--json]`, and `amw precision import DIR|FILE [--session ID] [--json]`.
 */
export const precisionCli: StageCli = {
  options: [
    { flags: '--baseline <host>', key: 'baseline', help: 'stage-precision:cli.baseline' },
    { flags: '--entry <file:function>', key: 'entry', help: 'cli.opt.entry' },
    { flags: '--dtype <dtype>', key: 'dtype', help: 'stage-precision:cli.dtype' },
    { flags: '--mode <mode>', key: 'mode', help: 'stage-precision:cli.mode' },
    { flags: '--backward', key: 'backward', help: 'cli.opt.backward' },
  ],
  input: (o) => ({
    baseline: o.baseline,
    entry: o.entry,
    dtype: o.dtype,
    mode: o.mode,
    backward: o.backward,
  }),
  async json(run, call, stageRunId) {
    const r = await call('precision.get', { stageRunId }).catch(() => null);
    const f = r?.firstDivergence ?? null;
    return {
      session: run.session,
      stage: run.stage,
      host: run.host,
      baseline: r?.baseline ?? null,
      status: run.status,
      dtype: r?.dtype ?? null,
      mode: r?.mode ?? null,
      inputsSha256: r?.inputsSha256 ?? null,
      firstDivergence: f
        ? {
            module: f.module,
            source: f.source,
            cosine: f.cosine,
            maxAbsErr: f.maxAbsErr,
            maxRelErr: f.maxRelErr,
            statDrift: f.statDrift,
            result: f.result,
          }
        : null,
      modules: (r?.modules ?? []).map((m) => ({
        module: m.module,
        order: m.order,
        cosine: m.cosine,
        maxAbsErr: m.maxAbsErr,
        maxRelErr: m.maxRelErr,
        meanRelErr: m.meanRelErr,
        oneThousandthRatio: m.oneThousandthRatio,
        fiveThousandthsRatio: m.fiveThousandthsRatio,
        statDrift: m.statDrift,
        result: m.result,
      })),
      checks: run.checks.map((c) => ({ id: c.id, status: c.status, summary: c.summary })),
    };
  },
  commands: [
    {
      path: ['precision', 'import'],
      args: ['<path>'],
      help: 'stage-precision:cli.import',
      options: [{ flags: '--session <id>', key: 'session', help: 'stage-precision:cli.session' }],
      async run(args, o, call, show) {
        const { resolve } = await import('node:path');
        const r = await call('precision.import', {
          path: resolve(args[0]!),
          sessionId: o.session ? Number(o.session) : undefined,
        });
        const run = await call('stages.get', { id: r.stageRunId });
        const view = await call('precision.get', { stageRunId: r.stageRunId });
        const doc = {
          session: r.sessionId,
          stageRunId: r.stageRunId,
          stage: 'precision',
          status: run.status,
          files: r.files,
          problems: r.problems.map((p) => show(p)),
          firstDivergence: view.firstDivergence,
          counts: view.counts,
          modules: view.modules.length,
          checks: run.checks.map((c) => ({ id: c.id, status: c.status, summary: show(c.summary) })),
        };
        const text = [
          `precision import: ${run.status}  (session ${r.sessionId}, run ${r.stageRunId})`,
          ...run.checks.map((c) => `  ${c.status.padEnd(4)} ${c.id.padEnd(28)} ${show(c.summary)}`),
          ...doc.problems.map((p) => `  ! ${p}`),
        ].join('\n');
        return { json: doc, text: `${text}\n`, status: run.status };
      },
    },
  ],
};
