import type { StageCli } from '../define';

/** `amw run HOST --stage ops --entry FILE:FUNCTION | --script FILE [--backward] [--torch-npu V]` */
export const opsCli: StageCli = {
  options: [
    { flags: '--entry <file:function>', key: 'entry', help: 'cli.opt.entry' },
    { flags: '--script <file>', key: 'script', help: 'cli.opt.script' },
    { flags: '--backward', key: 'backward', help: 'cli.opt.backward' },
    { flags: '--torch-npu <version>', key: 'torchNpu', help: 'cli.opt.torchNpu' },
  ],
  input: (o) => ({
    entry: o.entry,
    script: o.script,
    backward: o.backward,
    torchNpu: o.torchNpu,
  }),
  // the documented ops document: the classified op table beside the checks
  async json(run, call, stageRunId) {
    const r = await call('ops.get', { stageRunId }).catch(() => null);
    return {
      session: run.session,
      stage: run.stage,
      host: run.host,
      status: run.status,
      targetTorchNpu: r?.targetTorchNpu ?? null,
      opList: r?.opList ?? null,
      breakdown: r?.breakdown ?? null,
      ops: (r?.ops ?? []).map((x) => ({
        op: x.op,
        overload: x.overload,
        count: x.count,
        shapes: x.shapes,
        dtypes: x.dtypes,
        class: x.class,
        dynamic: x.dynamic,
        modules: x.modules,
        sources: x.sources.map((src) => src.at),
        ...(x.replacement ? { replacement: x.replacement } : {}),
        reason: x.reason,
      })),
      variableInputs: r?.variableInputs ?? [],
      error: r?.error ?? null,
      checks: run.checks.map((c) => ({ id: c.id, status: c.status, summary: c.summary })),
    };
  },
};
