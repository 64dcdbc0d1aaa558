import type {
  OpClass,
  OpRow,
  OpsBreakdown,
  OpsResult,
  RawOpTrace,
  RawTracedOp,
} from '../../../../shared/stages/ops/api';
import { opListFor, type OpList } from './op-lists';

/** Fused torch_npu APIs a porter reaches for when these ops show up (torch-npu-migration.md §5). */
const REPLACEMENTS: Record<string, string> = {
  _scaled_dot_product_flash_attention: 'torch_npu.npu_fusion_attention',
  _scaled_dot_product_efficient_attention: 'torch_npu.npu_fusion_attention',
  scaled_dot_product_attention: 'torch_npu.npu_fusion_attention',
  _softmax: 'torch_npu.npu_scaled_masked_softmax (with masked_fill before it)',
  masked_fill: 'torch_npu.npu_scaled_masked_softmax (mask + softmax in one op)',
  native_layer_norm: 'torch_npu.npu_rms_norm where the model is an RMSNorm variant',
  rms_norm: 'torch_npu.npu_rms_norm',
  gelu: 'torch_npu.npu_gelu / npu_fast_gelu',
  silu: 'torch_npu.npu_silu (or npu_swiglu for SiLU(a)*b)',
  _embedding_bag: 'RecSDK embedding ops for large tables',
  _embedding_bag_dense_backward: 'RecSDK embedding ops for large tables',
};

const RANK: Record<OpClass, number> = {
  direct: 0,
  'needs-change': 1,
  'cpu-fallback': 2,
  unsupported: 3,
};

/** The key the op lists use: `name` for the default overload, else `name.overload`. */
const listKey = (name: string, overload: string) =>
  overload === 'default' || overload === '' ? name : `${name}.${overload}`;

function classifyOne(
  op: { name: string; overload: string; dtypes: string[]; sparse: boolean },
  list: OpList,
  composite: RawTracedOp['composite'],
  callees: string[] | null,
  known: Map<string, Pick<RawTracedOp, 'composite' | 'callees'>>,
  depth = 0,
): { cls: OpClass; reason: string } {
  // structured ops: the backend registers `name.out`; the functional and in-place forms come
  // from it (gelu in 2.9 is listed only as gelu.out)
  const structured = list.native.has(`${op.name.replace(/_$/, '')}.out`);
  const has = list.native.has(listKey(op.name, op.overload)) || structured;
  const api = ['torch.', 'torch.Tensor.', 'torch.nn.functional.']
    .map((p) => list.support.get(`${p}${op.name.replace(/^_+/, '')}`))
    .find(Boolean);
  if (op.sparse || /sparse/.test(op.name)) {
    if (!has)
      return {
        cls: 'unsupported',
        reason: 'sparse op without an NPU kernel: torch_npu raises instead of falling back',
      };
  }
  if (has) {
    const wide = op.dtypes.filter((d) => d === 'float64' || d.startsWith('complex'));
    if (wide.length)
      return {
        cls: 'needs-change',
        reason: `NPU kernel exists, but ${wide.join(', ')} is not supported by most NPU kernels: compute in float32`,
      };
    if (api && !api.a2)
      return {
        cls: 'needs-change',
        reason: `Ascend's support table marks it ✘ on Atlas A2${api.note ? `: ${api.note}` : ''}`,
      };
    return { cls: 'direct', reason: api?.note ? `NPU kernel (note: ${api.note})` : 'NPU kernel' };
  }
  // no kernel of its own: a composite op runs as the ops it calls on the NPU as well (an op
  // that only calls itself, like detach, is a view with no compute of its own)
  const self = `aten::${op.name}.${op.overload}`;
  const others = callees?.filter((c) => c !== self) ?? null;
  if (composite && callees && callees.length && others && !others.length)
    return { cls: 'direct', reason: 'composite view op: no kernel needed' };
  callees = others;
  if (composite && callees && callees.length && depth < 4) {
    let worst: { cls: OpClass; reason: string } = { cls: 'direct', reason: '' };
    for (const c of callees) {
      const [name, overload = 'default'] = c.replace(/^aten::/, '').split('.');
      // a callee the trace also saw at the top level brings its own composite facts
      const facts = known.get(c);
      const r = classifyOne(
        { name: name!, overload, dtypes: op.dtypes, sparse: op.sparse },
        list,
        facts?.composite ?? null,
        facts?.callees ?? null,
        known,
        depth + 1,
      );
      if (RANK[r.cls] > RANK[worst.cls]) worst = { cls: r.cls, reason: `${c}: ${r.reason}` };
    }
    return {
      cls: worst.cls,
      reason: `composite (${composite}) over ${callees.join(', ')}${worst.reason ? `; worst: ${worst.reason}` : ''}`,
    };
  }
  if (composite === 'explicit' && callees && callees.length === 0)
    return { cls: 'direct', reason: 'composite op that only reshapes metadata' };
  return {
    cls: 'cpu-fallback',
    reason:
      'no NPU kernel in this torch_npu: runs on the CPU (a one-time warning, a host round trip each call)',
  };
}

/** Classifies a raw trace for one torch_npu version; done locally, so any version can be asked. */
export function classifyTrace(trace: RawOpTrace, torchNpu: string): OpsResult {
  const list = opListFor(torchNpu);
  const observed = new Set(trace.observedFallbacks ?? []);
  const sameLine = !!trace.torchNpu && opListFor(trace.torchNpu).tag === list.tag;
  const known = new Map<string, Pick<RawTracedOp, 'composite' | 'callees'>>([
    ...Object.entries(trace.calleeFacts ?? {}),
    ...trace.ops.map((o) => [`${o.op}.${o.overload}`, o] as const),
  ]);
  const ops: OpRow[] = trace.ops.map((o) => {
    const name = o.op.replace(/^aten::/, '');
    // what the host's own torch_npu reported beats what the list predicts, for that version
    const seen = sameLine && observed.has(o.op.startsWith('aten::') ? o.op : `aten::${o.op}`);
    const { cls, reason } = seen
      ? {
          cls: 'cpu-fallback' as const,
          reason: `observed on the host: torch_npu ${trace.torchNpu ?? ''} warned that it ran on the CPU`,
        }
      : classifyOne(
          { name, overload: o.overload, dtypes: o.dtypes, sparse: o.sparse },
          list,
          o.composite,
          o.callees,
          known,
        );
    const replacement = REPLACEMENTS[name];
    return {
      op: o.op.startsWith('aten::') ? o.op : `aten::${o.op}`,
      overload: o.overload,
      count: o.count,
      shapes: o.shapes,
      distinctShapes: o.distinctShapes,
      dtypes: o.dtypes,
      class: cls,
      reason,
      dynamic: o.dynamic,
      modules: o.modules,
      sources: o.sources,
      composite: o.composite,
      ...(replacement ? { replacement } : {}),
    };
  });
  ops.sort((a, b) => RANK[b.class] - RANK[a.class] || b.count - a.count);
  const breakdown: OpsBreakdown = { direct: 0, needsChange: 0, cpuFallback: 0, unsupported: 0 };
  for (const o of ops) {
    if (o.class === 'direct') breakdown.direct++;
    else if (o.class === 'needs-change') breakdown.needsChange++;
    else if (o.class === 'cpu-fallback') breakdown.cpuFallback++;
    else breakdown.unsupported++;
  }
  return {
    targetTorchNpu: torchNpu,
    opList: list.tag,
    opListNote: list.note,
    breakdown,
    ops,
    variableInputs: variableInputs(trace),
    error: trace.error,
    aicpu: trace.aicpu ?? [],
    torch: trace.torch ?? null,
    batches: trace.batches,
    warnings: trace.warnings,
  };
}

/** Which positional inputs change shape across batches, and along which dimensions. */
export function variableInputs(
  trace: RawOpTrace,
): { arg: number; dims: number[]; seen: number[][] }[] {
  const out: { arg: number; dims: number[]; seen: number[][] }[] = [];
  const first = trace.inputs[0] ?? [];
  first.forEach((_, i) => {
    const shapes = trace.inputs
      .map((b) => b[i])
      .filter((x): x is { shape: number[]; dtype: string } => !!x && 'shape' in x)
      .map((x) => x.shape);
    if (shapes.length < 2) return;
    const rank = shapes[0]!.length;
    const dims = Array.from({ length: rank }, (_, d) => d).filter(
      (d) => new Set(shapes.map((s) => s[d])).size > 1,
    );
    if (dims.length) out.push({ arg: i, dims, seen: shapes.slice(0, 12) });
  });
  return out;
}
