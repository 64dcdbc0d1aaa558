import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CheckOutcome, OpsResult, RawOpTrace } from '../../../../shared/api';
import { AmwError } from '../../../../shared/errors';
import type { Db } from '../../db/open';
import { nowIso } from '../../db/open';
import { decodeProbe, parseInventory } from '../../hosts/inventory-parse';
import type { JobContext } from '../../jobs/runner';
import { loadKnowledge } from '../../knowledge/load';
import { resourcesDir } from '../../paths';
import { stageStatus } from '../../sessions/repository';
import { markEndedRun, type StageDeps } from '../run-stage';
import { validateOpTrace } from '../../parsers/op-trace';
import { classifyTrace } from './classify';

export interface OpsInput {
  entry?: string;
  script?: string;
  backward?: boolean;
  torchNpu?: string;
}

const MARKER = '@@AMW-OPS@@';

const FALLBACK =
  /operator '([\w:.]+)' is not currently supported on the NPU backend and will fall back to run on the CPU/g;

/**
 * What the run itself said on an NPU host: torch_npu's one-time CPU-fallback warnings (in the
 * harness's captured warnings or on stderr) and AICPU notices from CANN's log on stdout.
 */
export function observedOnHost(
  output: string,
  trace: RawOpTrace,
): { observedFallbacks: string[]; aicpu: string[] } {
  const text = `${output}\n${trace.warnings.join('\n')}`;
  const ops = new Set<string>();
  for (const m of text.matchAll(FALLBACK))
    ops.add(m[1]!.startsWith('aten::') ? m[1]! : `aten::${m[1]!}`);
  const aicpu = [
    ...new Set(
      output
        .split('\n')
        .filter((l) => /aicpu/i.test(l) && !l.startsWith('@@AMW-OPS@@'))
        .map((l) => l.trim().slice(0, 300)),
    ),
  ].slice(0, 50);
  return { observedFallbacks: [...ops].sort(), aicpu };
}

/** The harness's JSON line out of the section's output; what came before it is the run's log. */
export function readTrace(text: string): RawOpTrace {
  const at = text.lastIndexOf(MARKER);
  if (at < 0)
    throw new AmwError(
      'PROBE_FAILED',
      `The op capture printed no result. Last output: ${text.slice(-600) || '(nothing)'}`,
    );
  const line = text.slice(at + MARKER.length).split('\n')[0]!;
  let doc: RawOpTrace;
  try {
    doc = JSON.parse(line) as RawOpTrace;
  } catch {
    throw new AmwError('PROBE_FAILED', 'The op capture printed a result that is not JSON.');
  }
  if (!Array.isArray(doc?.ops) || !Array.isArray(doc?.inputs))
    throw new AmwError('PROBE_FAILED', 'The op capture result has no op table.');
  return validateOpTrace(doc);
}

const t = (en: string, zh: string) => ({ en, 'zh-CN': zh });

/** The stage's checks: what blocks, what is slow, what is shape-dynamic; evidence is the table. */
export function opsOutcomes(r: OpsResult): CheckOutcome[] {
  const title = {
    trace: t('Operator capture', '算子采集'),
    unsupported: t('Unsupported operators', '不支持的算子'),
    fallback: t('Operators falling back to the CPU', '回退到 CPU 的算子'),
    change: t('Operators that need changes', '需要修改的算子'),
    dynamic: t('Dynamic shapes', '动态形状'),
  };
  if (r.error) {
    const skip = (id: string, tt: { en: string; 'zh-CN': string }): CheckOutcome => ({
      id,
      title: tt,
      status: 'skip',
      summary: t('Not evaluated: the capture did not finish.', '未评估：采集没有完成。'),
      evidence: null,
      remediation: null,
    });
    return [
      {
        id: 'ops.trace',
        title: title.trace,
        status: 'fail',
        summary: t(
          `The model failed: ${r.error.type}: ${r.error.message}`,
          `模型运行失败：${r.error.type}: ${r.error.message}`,
        ),
        evidence: { traceback: r.error.traceback, phase: r.error.phase ?? null },
        remediation: t(
          'Fix the entry (it must return (model, batches)) so it runs on this host, then run the stage again.',
          '修正入口（需返回 (model, batches)），使其能在该主机上运行，然后重新运行本阶段。',
        ),
      },
      skip('ops.unsupported', title.unsupported),
      skip('ops.cpu-fallback', title.fallback),
      skip('ops.needs-change', title.change),
      skip('ops.dynamic-shapes', title.dynamic),
    ];
  }
  const list = (cls: string) =>
    r.ops
      .filter((o) => o.class === cls)
      .map((o) => ({ op: o.op, overload: o.overload, count: o.count, reason: o.reason }));
  const dynamic = r.ops.filter((o) => o.dynamic);
  const b = r.breakdown;
  const total = r.ops.length;
  return [
    {
      id: 'ops.trace',
      title: title.trace,
      status: 'pass',
      summary: t(
        `${total} distinct ops over ${r.batches} batches: ${b.direct} direct, ${b.needsChange} need changes, ${b.cpuFallback} fall back to the CPU, ${b.unsupported} unsupported (torch_npu ${r.targetTorchNpu}, list ${r.opList}).`,
        `${r.batches} 个批次共 ${total} 种算子：直接支持 ${b.direct}，需修改 ${b.needsChange}，回退 CPU ${b.cpuFallback}，不支持 ${b.unsupported}（torch_npu ${r.targetTorchNpu}，算子表 ${r.opList}）。`,
      ),
      evidence: { breakdown: b, torch: r.torch, opList: r.opList, note: r.opListNote },
      remediation: null,
    },
    {
      id: 'ops.unsupported',
      title: title.unsupported,
      status: b.unsupported ? 'fail' : 'pass',
      summary: b.unsupported
        ? t(`${b.unsupported} ops raise on the NPU.`, `${b.unsupported} 种算子在 NPU 上会报错。`)
        : t('None.', '没有。'),
      evidence: list('unsupported'),
      remediation: b.unsupported
        ? t(
            'Replace them (sparse ops: use dense tensors or torch_npu counterparts) before moving on.',
            '先替换这些算子（稀疏算子：改用稠密张量或 torch_npu 对应算子）。',
          )
        : null,
    },
    {
      id: 'ops.cpu-fallback',
      title: title.fallback,
      status: b.cpuFallback ? 'warn' : 'pass',
      summary: b.cpuFallback
        ? t(
            `${b.cpuFallback} ops have no NPU kernel in torch_npu ${r.targetTorchNpu}: they run on the CPU, slowly.`,
            `${b.cpuFallback} 种算子在 torch_npu ${r.targetTorchNpu} 中没有 NPU 实现：会在 CPU 上缓慢运行。`,
          )
        : t('None.', '没有。'),
      evidence: list('cpu-fallback'),
      remediation: b.cpuFallback
        ? t(
            'Check whether a newer torch_npu has them (compare versions on this page), or rewrite with supported ops.',
            '查看更新的 torch_npu 是否支持（在本页比较版本），或用受支持的算子改写。',
          )
        : null,
    },
    {
      id: 'ops.needs-change',
      title: title.change,
      status: b.needsChange ? 'warn' : 'pass',
      summary: b.needsChange
        ? t(`${b.needsChange} ops have known limits here.`, `${b.needsChange} 种算子有已知限制。`)
        : t('None.', '没有。'),
      evidence: list('needs-change'),
      remediation: b.needsChange
        ? t(
            "See each op's reason (dtype, support table).",
            '请查看每个算子的原因（数据类型、支持表）。',
          )
        : null,
    },
    {
      id: 'ops.dynamic-shapes',
      title: title.dynamic,
      status: dynamic.length ? 'warn' : 'pass',
      summary: dynamic.length
        ? t(
            `${dynamic.length} ops see different shapes across batches; inputs that vary: ${r.variableInputs.map((v) => `arg ${v.arg} (dims ${v.dims.join(', ')})`).join('; ') || 'none named'}.`,
            `${dynamic.length} 种算子在不同批次看到不同形状；变化的输入：${r.variableInputs.map((v) => `参数 ${v.arg}（维度 ${v.dims.join(', ')}）`).join('；') || '未识别'}。`,
          )
        : t('Shapes are static across batches.', '各批次形状一致。'),
      evidence: {
        variableInputs: r.variableInputs,
        ops: dynamic.slice(0, 50).map((o) => ({ op: o.op, shapes: o.shapes.slice(0, 6) })),
      },
      remediation: dynamic.length
        ? t(
            'Every new shape compiles new NPU kernels. Pad or bucket variable lengths to a few fixed sizes (e.g. multiples of 64), and use torch.npu.set_compile_mode(jit_compile=False).',
            '每个新形状都会编译新的 NPU 算子。把变长输入填充或分桶到少数固定长度（如 64 的倍数），并设置 torch.npu.set_compile_mode(jit_compile=False)。',
          )
        : null,
    },
  ];
}

/**
 * The ops stage on one host: the inventory (for the host's torch_npu) and the capture harness in
 * one round trip; the raw trace is kept as evidence and classified here, for the target version.
 */
export async function runOpsStage(
  deps: StageDeps & { db: Db },
  host: string,
  runId: number,
  input: OpsInput,
  ctx: JobContext,
  password?: string,
): Promise<OpsResult & { stageRunId: number }> {
  try {
    const args = input.script
      ? { script: input.script, backward: !!input.backward }
      : { entry: input.entry, backward: !!input.backward };
    const res = await deps.hosts.runProbe(
      host,
      {
        name: 'ops',
        parts: ['inventory', 'ops'],
        timeoutMs: 1_900_000,
        inject: {
          AMW_OPS_ARGS: JSON.stringify(args),
          OPS_HARNESS: readFileSync(join(resourcesDir(), 'probes', 'ops_trace.py'), 'utf8'),
        },
      },
      ctx,
      password,
    );
    ctx.throwIfCancelled();
    ctx.progress(0.8, { key: 'evaluating', params: { host } });
    const sections = decodeProbe(res.stdout, 'ops');
    const inventory = parseInventory(res.stdout, host, nowIso());
    deps.hosts.saveInventory(host, inventory, res.stdout);
    const section = sections.ops_trace;
    if (!section)
      throw new AmwError(
        'PROBE_FAILED',
        `${host} has no python3 on the PATH of a non-interactive shell: the op capture needs Python with torch.`,
      );
    const trace = readTrace(section.out);
    Object.assign(trace, observedOnHost(section.out, trace));
    const target =
      input.torchNpu ??
      inventory.versions.torchNpu ??
      trace.torchNpu ??
      loadKnowledge().versions.recommended.torchNpu;
    const sha = deps.artifacts.put(JSON.stringify(trace), 'ops-trace', 'application/json');
    deps.db
      .prepare(
        'INSERT OR REPLACE INTO op_traces (stage_run_id, entry, target_torch_npu, trace_sha256, created_at) VALUES (?, ?, ?, ?, ?)',
      )
      .run(runId, input.script ?? input.entry ?? '', target, sha, nowIso());
    const result = classifyTrace(trace, target);
    const outcomes = opsOutcomes(result);
    deps.sessions.finishRun(runId, stageStatus(outcomes), outcomes);
    ctx.progress(1, { key: 'stored', params: { host } });
    return { ...result, stageRunId: runId };
  } catch (err) {
    markEndedRun(deps.sessions, runId, ctx, err);
    throw err;
  }
}

/** A stored run's trace, classified for its own target or for another torch_npu. */
export function storedOps(
  db: Db,
  readArtifact: (sha: string) => string,
  stageRunId: number,
  torchNpu?: string,
): OpsResult & { stageRunId: number; entry: string } {
  const row = db
    .prepare('SELECT entry, target_torch_npu, trace_sha256 FROM op_traces WHERE stage_run_id = ?')
    .get(stageRunId) as
    { entry: string; target_torch_npu: string; trace_sha256: string } | undefined;
  if (!row) throw new AmwError('NOT_FOUND', `Stage run ${stageRunId} has no operator trace.`);
  const trace = JSON.parse(readArtifact(row.trace_sha256)) as RawOpTrace;
  return {
    ...classifyTrace(trace, torchNpu ?? row.target_torch_npu),
    stageRunId,
    entry: row.entry,
  };
}
