import type { StageCli } from '../define';

/** `--ops gelu,aten::softmax` / `--modules 'block.*,head'`: a comma-separated list, or none. */
const list = (x: unknown): string[] | undefined =>
  typeof x === 'string'
    ? x
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : undefined;

/**
 * `amw run TARGET --stage precision --baseline B --entry FILE:FUNCTION | --script FILE [--steps N]
 * [--dtype] [--mode] [--modules P,…] [--ops OP,…] [--backward] [--json]`, `amw precision import
 * DIR|FILE [--session ID] [--json]` and `amw precision compare RUN_A RUN_B [--json]`.
 */
export const precisionCli: StageCli = {
  options: [
    { flags: '--baseline <host>', key: 'baseline', help: 'stage-precision:cli.baseline' },
    { flags: '--entry <file:function>', key: 'entry', help: 'cli.opt.entry' },
    { flags: '--script <file>', key: 'script', help: 'cli.opt.script' },
    { flags: '--steps <n>', key: 'steps', help: 'stage-precision:cli.steps' },
    { flags: '--dtype <dtype>', key: 'dtype', help: 'stage-precision:cli.dtype' },
    { flags: '--mode <mode>', key: 'mode', help: 'stage-precision:cli.mode' },
    { flags: '--modules <patterns>', key: 'modules', help: 'stage-precision:cli.modules' },
    { flags: '--ops <ops>', key: 'ops', help: 'stage-precision:cli.ops' },
    { flags: '--backward', key: 'backward', help: 'cli.opt.backward' },
  ],
  input: (o) => ({
    baseline: o.baseline,
    entry: o.entry,
    script: o.script,
    steps: o.steps === undefined ? undefined : Number(o.steps),
    dtype: o.dtype,
    mode: o.mode,
    modules: list(o.modules),
    ops: list(o.ops),
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
        kind: m.kind,
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
    {
      path: ['precision', 'compare'],
      args: ['<runA>', '<runB>'],
      help: 'stage-precision:cli.compare',
      options: [],
      async run(args, _o, call, show) {
        const [a, b] = args.map((x) => Number(x)) as [number, number];
        const r = await call('precision.compareRuns', { a, b });
        const doc = {
          a: r.a.stageRunId,
          b: r.b.stageRunId,
          moved: r.moved,
          summary: show(r.summary),
          firstDivergence: r.first,
          counts: r.counts,
          changed: r.changed,
          onlyIn: r.onlyIn,
        };
        const text = [
          show(r.summary),
          show({
            key: 'stage-precision:runs.changes',
            params: { ...r.counts, a: r.a.stageRunId, b: r.b.stageRunId },
          }),
          ...r.changed
            .slice(0, 50)
            .map((c) => `  ${c.change.padEnd(9)} ${c.module}  ${c.a} → ${c.b}`),
        ].join('\n');
        // a comparison is information: it succeeds whatever moved (exit 0)
        return { json: doc, text: `${text}\n`, status: 'pass' };
      },
    },
  ],
};
