import type { DumpSide, ModuleCompare } from '../../../../shared/stages/precision/api';
import type { StageCli } from '../define';

const NS = 'stage-precision:';
/** Rows `precision show` prints as text without --module (all of them in --json). */
const SHOW_ROWS = 200;

const num = (x: number | null) => (x === null ? '—' : x === 0 ? '0' : x.toPrecision(4));

/** One side of `precision show --module`: where it ran, then each record's outputs. */
function sideLines(name: string, d: DumpSide | null, missing: string): string[] {
  if (!d) return [`${name}: ${missing}`];
  const head = `${name}: ${d.device}, torch ${d.torch ?? '?'}${d.torchNpu ? `, torch_npu ${d.torchNpu}` : ''}, ${d.autocast ? `${d.autocast.device} ${d.autocast.dtype}` : d.dtype}`;
  return [
    head,
    ...d.modules.flatMap((r) =>
      r.outputs.map(
        (o, i) =>
          `  ${r.order} ${r.module || '(model)'}${r.call ? ` #${r.call + 1}` : ''} ${r.kind ?? 'forward'} [${i}] ${o.dtype} [${o.shape.join('x')}] max ${num(o.max)} min ${num(o.min)} mean ${num(o.mean)} norm ${num(o.norm)}${o.nan || o.inf ? ` nan ${o.nan} inf ${o.inf}` : ''}`,
      ),
    ),
  ];
}

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
      path: ['precision', 'show'],
      args: ['<run>'],
      help: `${NS}cli.show`,
      options: [{ flags: '--module <name>', key: 'module', help: `${NS}cli.module` }],
      async run(args, o, call, show) {
        const stageRunId = Number(args[0]);
        const view = await call('precision.get', { stageRunId });
        const word = (r: string) => show({ key: `${NS}result.${r}` });
        if (typeof o.module !== 'string') {
          const rows = (m: ModuleCompare) =>
            `  ${String(m.order).padStart(5)} ${word(m.result).padEnd(8)} ${m.module}  cos ${num(m.cosine)}  err ${num(m.maxAbsErr ?? m.statDrift)}`;
          const text = [
            show({
              key: `${NS}report.summary`,
              params: {
                host: view.host || '?',
                baseline: view.baseline,
                entry: view.entry,
                dtype: view.dtype,
                mode: { key: `${NS}modeName.${view.mode}` },
              },
            }),
            ...view.modules.slice(0, SHOW_ROWS).map(rows),
            ...(view.modules.length > SHOW_ROWS
              ? [`  … ${view.modules.length - SHOW_ROWS} (--json)`]
              : []),
          ].join('\n');
          return { json: view, text: `${text}\n`, status: 'pass' };
        }
        const module = o.module;
        const row = view.modules.find((m) => m.module === module) ?? null;
        const dumps = await call('precision.dumps', { stageRunId, module });
        if (!row && !dumps.baseline?.modules.length && !dumps.target?.modules.length) {
          const text = show({ key: `${NS}cli.noModule`, params: { run: stageRunId, module } });
          return { json: { error: text, module, stageRunId }, text: `${text}\n`, status: 'fail' };
        }
        const missing = show({ key: `${NS}ui.noDump` });
        const text = [
          ...(row
            ? [
                `${row.module}: ${word(row.result)}  cos ${num(row.cosine)}  maxAbsErr ${num(row.maxAbsErr)}  maxRelErr ${num(row.maxRelErr)}  drift ${num(row.statDrift)}`,
              ]
            : []),
          ...(row?.reason
            ? [`  ${show({ key: `${NS}${row.reason.key}`, params: row.reason.params })}`]
            : []),
          ...sideLines(show({ key: `${NS}side.baseline` }), dumps.baseline, missing),
          ...sideLines(show({ key: `${NS}side.target` }), dumps.target, missing),
        ].join('\n');
        return {
          json: {
            stageRunId,
            module,
            compare: row,
            baseline: dumps.baseline,
            target: dumps.target,
          },
          text: `${text}\n`,
          status: 'pass',
        };
      },
    },
    {
      path: ['precision', 'compare'],
      args: ['<runA>', '<runB>'],
      help: 'stage-precision:cli.compare',
      options: [],
      async run(args, _o, call, show) {
        const word = (r: string) => show({ key: `${NS}result.${r}` });
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
            .map(
              (c) =>
                `  ${show({ key: `${NS}ui.${c.change}` }).padEnd(9)} ${c.module}  ${word(c.a)} → ${word(c.b)}`,
            ),
        ].join('\n');
        // a comparison is information: it succeeds whatever moved (exit 0)
        return { json: doc, text: `${text}\n`, status: 'pass' };
      },
    },
  ],
};
