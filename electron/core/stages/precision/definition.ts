import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { precisionStage } from '../../../../shared/stages/precision';
import type { PrecisionCompareResult, RawDump } from '../../../../shared/stages/precision/api';
import { AmwError } from '../../../../shared/errors';
import { msg, type Msg } from '../../../../shared/api/text';
import { nowIso } from '../../db/open';
import { decodeProbe, parseInventory } from '../../hosts/inventory-parse';
import { resourcesDir } from '../../paths';
import { defineStage, type StageRun } from '../define';
import type { StageInputOf } from '../../../../shared/stages';
import { precisionCli } from './cli';
import { compareDumps, type TensorReader } from './compare';
import { readDump } from './dump';
import { precisionHandlers } from './handlers';
import { CHECK_IDS, precisionOutcomes } from './outcomes';
import { precisionReport } from './report';
import { PrecisionRepository } from './repository';
import { openTensorFiles } from './tensor-files';
import { precisionLimits } from './tolerances';
import { cleanUp, fetchFile, moveState } from './transfer';

type Run = StageRun<StageInputOf<'precision'>>;

/** One side's dump: the inventory and the harness in one round trip; the inventory is stored. */
async function dumpOn(
  run: Run,
  name: string,
  args: Record<string, unknown>,
  span: [number, number],
): Promise<{ dump: RawDump; snapshotId: number }> {
  const { services, job, input } = run;
  const [from, to] = span;
  const res = await services.hosts.runProbe(
    name,
    {
      name: 'precision',
      parts: ['inventory', 'precision'],
      timeoutMs: 1_900_000,
      inject: {
        AMW_PRECISION_ARGS: JSON.stringify(args),
        PRECISION_HARNESS: readFileSync(
          join(resourcesDir(), 'probes', 'precision_dump.py'),
          'utf8',
        ),
      },
    },
    {
      signal: job.signal,
      progress: (f, text) => job.progress(f === null ? null : from + (to - from) * f, text),
    },
    input.password,
  );
  job.throwIfCancelled();
  const sections = decodeProbe(res.stdout, 'precision');
  const inventory = parseInventory(res.stdout, name, nowIso());
  const snapshotId = services.hosts.saveInventory(name, inventory, res.stdout);
  const section = sections.precision_dump;
  try {
    if (!section)
      throw new AmwError(
        'PROBE_FAILED',
        `${name} has no python3 on the PATH of a non-interactive shell: the dump needs Python with torch.`,
        { host: name, text: msg('stage-precision:noPython', { host: name }) },
      );
    return { dump: await readDumpOf(run, name, section.out), snapshotId };
  } catch (e) {
    // the harness died (killed, out of memory) or printed no readable result: that side's
    // failure, named, while what the other side measured is kept; cancelling still ends the run
    if (!(e instanceof AmwError) || e.code !== 'PROBE_FAILED' || job.signal.aborted) throw e;
    return { dump: failedDump(args, e), snapshotId };
  }
}

/** A side whose harness gave no result: its error in the dump's own shape. */
function failedDump(args: Record<string, unknown>, e: AmwError): RawDump {
  return {
    v: 1,
    role: args.role === 'target' ? 'target' : 'baseline',
    entry: String(args.entry ?? args.script ?? ''),
    device: 'unknown',
    deviceNote: null,
    dtype: 'fp32',
    autocast: null,
    bf16Supported: null,
    determinism: {
      seed: null,
      torchDeterministic: null,
      cudnnDeterministic: null,
      npuDeterministic: null,
      hcclDeterministic: null,
      worldSize: 1,
    },
    gradScaler: null,
    mode: args.mode === 'tensor' ? 'tensor' : 'statistics',
    modules: [],
    batches: 0,
    warnings: [],
    error: {
      type: e.code,
      message: e.message,
      traceback: '',
      phase: 'result',
      text: e.text ?? (e.detail as { text?: Msg } | undefined)?.text,
    },
  };
}

/** The harness's result: from stdout, or fetched over SFTP when it was too large for it. */
async function readDumpOf(run: Run, name: string, out: string): Promise<RawDump> {
  const { services, job, input } = run;
  let dump = readDump(out, name);
  if (dump.file) {
    // too large for stdout: the harness wrote it on the host, fetched here over SFTP
    const local = mkdtempSync(join(tmpdir(), 'amw-precision-dump-'));
    try {
      await fetchFile(
        services.hosts,
        name,
        dump.file,
        join(local, 'dump.json'),
        job,
        input.password,
      );
      dump = readDump(`@@AMW-PRECISION@@${readFileSync(join(local, 'dump.json'), 'utf8')}`, name);
    } finally {
      rmSync(local, { recursive: true, force: true });
    }
  }
  return dump;
}

/** Tensor mode: both sides' tensor files fetched here, read module by module (never whole). */
async function tensorReader(
  run: Run,
  base: { host: string; dump: RawDump },
  target: { host: string; dump: RawDump },
  local: string,
): Promise<(TensorReader & { close: () => void }) | null> {
  if (!base.dump.tensors || !target.dump.tensors) return null;
  const files = { baseline: join(local, 'baseline.bin'), target: join(local, 'target.bin') };
  await fetchFile(
    run.services.hosts,
    base.host,
    base.dump.tensors.path,
    files.baseline,
    run.job,
    run.input.password,
  );
  await fetchFile(
    run.services.hosts,
    target.host,
    target.dump.tensors.path,
    files.target,
    run.job,
    run.input.password,
  );
  return openTensorFiles(files);
}

/**
 * The precision stage: the baseline host dumps (and saves its weights and inputs), the engine
 * moves those to the target over SFTP (checksummed), the target loads them and dumps; the two are
 * compared here module by module. Working files on both hosts are removed whatever happens.
 */
export const precisionDefinition = defineStage({
  shared: precisionStage,
  merge: 'replace',
  report: precisionReport,
  cli: precisionCli,
  handlers: precisionHandlers,
  // the host the baseline ran on (an import's is its label)
  hostColumns: [
    {
      table: 'precision_runs',
      column: 'baseline',
      runColumn: 'stage_run_id',
      scope: 'since',
      where: "source = 'run'",
    },
  ],
  prepare(input, services) {
    if (!input.entry === !input.script)
      throw new AmwError(
        'VALIDATION',
        'The precision stage needs either an entry (FILE:FUNCTION returning (model, batches)) or a script.',
        { issues: [{ path: 'entry', message: 'stage-precision:needsEntry' }] },
      );
    // options that only mean something in another mode are refused, not silently dropped
    if (input.steps !== undefined && !input.script)
      throw new AmwError(
        'VALIDATION',
        '--steps counts the model calls of a script: give --script.',
        {
          issues: [{ path: 'steps', message: 'stage-precision:stepsNeedScript' }],
        },
      );
    if (input.modules?.length && input.mode !== 'tensor')
      throw new AmwError(
        'VALIDATION',
        '--modules chooses whose tensors tensor mode keeps: give --mode tensor.',
        { issues: [{ path: 'modules', message: 'stage-precision:modulesNeedTensor' }] },
      );
    services.hostRepo.get(input.baseline); // NOT_FOUND now, not in the job
    return input;
  },
  async run(run) {
    const { input, host, runId, job, services } = run;
    const target = host!;
    const baseline = input.baseline;
    const workdir = `.amw-precision/run-${runId}-${randomBytes(4).toString('hex')}`;
    const caps = precisionLimits().tensorMode;
    const common = {
      entry: input.entry,
      script: input.script,
      steps: input.steps,
      ops: input.ops,
      modules: input.modules,
      mode: input.mode,
      backward: !!input.backward,
      tensorCap: caps.elementsPerOutput,
      tensorTotal: caps.bytesPerRun,
      workdir,
    };
    const local = mkdtempSync(join(tmpdir(), 'amw-precision-run-'));
    const repo = new PrecisionRepository(services.db, services.artifacts);
    let reader: (TensorReader & { close?: () => void }) | null = null;
    try {
      const base = await dumpOn(run, baseline, { ...common, role: 'baseline' }, [0, 0.4]);
      let tgt: { dump: RawDump; snapshotId: number } | null = null;
      let moved: { sha256: string; bytes: number } | null = null;
      if (!base.dump.error && base.dump.state) {
        job.progress(0.42, { key: 'probing', params: { host: target } });
        if (baseline !== target)
          moved = await moveState(
            services.hosts,
            baseline,
            target,
            base.dump.state.path,
            base.dump.state.sha256,
            job,
            input.password,
          );
        job.throwIfCancelled();
        tgt = await dumpOn(
          run,
          target,
          {
            ...common,
            role: 'target',
            dtype: input.dtype,
            state: base.dump.state.path,
            sha256: base.dump.state.sha256,
          },
          [0.45, 0.85],
        );
      }
      job.progress(0.9, { key: 'evaluating', params: { host: target } });
      const targetDump: RawDump = tgt?.dump ?? {
        ...base.dump,
        role: 'target',
        modules: [],
        error: base.dump.error,
      };
      let result: PrecisionCompareResult | null = null;
      if (!base.dump.error && tgt && !tgt.dump.error) {
        if (input.mode === 'tensor')
          reader = await tensorReader(
            run,
            { host: baseline, dump: base.dump },
            { host: target, dump: tgt.dump },
            local,
          );
        result = compareDumps(base.dump.modules, tgt.dump.modules, {
          dtype: input.dtype,
          mode: input.mode,
          read: reader,
        });
      }
      repo.save(
        runId,
        {
          source: 'run',
          baseline,
          entry: input.entry ?? input.script!,
          backward: !!input.backward,
          inputsSha256:
            tgt?.dump.loaded?.sha256 ?? moved?.sha256 ?? base.dump.state?.sha256 ?? null,
          baselineSnapshotId: base.snapshotId,
          targetSnapshotId: tgt?.snapshotId ?? null,
          dumps: { baseline: base.dump, target: targetDump },
          problems: [],
        },
        result ?? {
          dtype: input.dtype,
          mode: input.mode,
          counts: { pass: 0, warning: 0, error: 0 },
          firstDivergence: null,
          modules: [],
          unmatched: [],
        },
      );
      return {
        outcomes: precisionOutcomes({
          host: target,
          baseline,
          baselineDump: base.dump,
          targetDump,
          result,
        }),
      };
    } finally {
      reader?.close?.();
      rmSync(local, { recursive: true, force: true });
      await Promise.all(
        [...new Set([baseline, target])].map((h) =>
          cleanUp(
            services.hosts,
            h,
            workdir,
            { signal: new AbortController().signal },
            input.password,
          ),
        ),
      );
    }
  },
  knowledge: () => ({
    checks: [...CHECK_IDS],
    tolerances: Object.keys(precisionLimits().tolerances),
  }),
});
