import type {
  DtypePolicy,
  FirstDivergence,
  ModuleCompare,
  PrecisionCompareResult,
  PrecisionMode,
  PrecisionResult,
  RawModuleRecord,
  TensorStats,
} from '../../../../shared/stages/precision/api';
import { precisionLimits, type Tolerance } from './tolerances';

type Reason = ModuleCompare['reason'];
const RANK: Record<PrecisionResult, number> = { pass: 0, warning: 1, error: 2 };
const FLOAT32_EPS = 1.1920928955078125e-7;
const fmt = (x: number) =>
  x === 0 ? '0' : Math.abs(x) < 1e-3 ? x.toExponential(2) : x.toPrecision(4);

/** msprobe's metrics over two equally long tensors (knowledge §4.5). */
export interface TensorMetrics {
  cosine: number;
  maxAbsErr: number;
  maxRelErr: number;
  meanRelErr: number;
  oneThousandthRatio: number;
  fiveThousandthsRatio: number;
  /** max |bench|: what MaxAbsErr is measured against for the dtype-aware limits. */
  scale: number;
}

/**
 * Cosine = N·B/(‖N‖‖B‖); MaxAbsErr = max|N-B|; RE = |N-B|/|B| with, as msprobe's
 * get_relative_err does, float32 eps added to both sides where B is 0; the ratios are the share of
 * elements with RE < 0.001 and < 0.005. Non-finite elements are left out (counted elsewhere).
 */
export function tensorMetrics(n: ArrayLike<number>, b: ArrayLike<number>): TensorMetrics {
  let dot = 0;
  let nn = 0;
  let bb = 0;
  let maxAbs = 0;
  let maxRel = 0;
  let sumRel = 0;
  let one = 0;
  let five = 0;
  let count = 0;
  let scale = 0;
  const { oneThousandth, fiveThousandths } = precisionLimits().msprobe;
  const len = Math.min(n.length, b.length);
  for (let i = 0; i < len; i++) {
    let x = n[i]!;
    let y = b[i]!;
    if (!Number.isFinite(x) || !Number.isFinite(y)) continue;
    count++;
    dot += x * y;
    nn += x * x;
    bb += y * y;
    const abs = Math.abs(x - y);
    if (abs > maxAbs) maxAbs = abs;
    if (Math.abs(y) > scale) scale = Math.abs(y);
    if (y === 0) {
      x += FLOAT32_EPS;
      y += FLOAT32_EPS;
    }
    const rel = Math.abs((x - y) / y);
    if (rel > maxRel) maxRel = rel;
    sumRel += rel;
    if (rel < oneThousandth) one++;
    if (rel < fiveThousandths) five++;
  }
  const cosine = nn === 0 && bb === 0 ? 1 : nn === 0 || bb === 0 ? 0 : dot / Math.sqrt(nn * bb);
  return {
    cosine: Math.min(1, cosine),
    maxAbsErr: maxAbs,
    maxRelErr: maxRel,
    meanRelErr: count ? sumRel / count : 0,
    oneThousandthRatio: count ? one / count : 1,
    fiveThousandthsRatio: count ? five / count : 1,
    scale,
  };
}

/**
 * Statistics drift: the largest of |ΔMax|, |ΔMin|, |ΔMean| over the tensor's scale
 * (max |value| on either side) and |ΔNorm| over the larger norm. msprobe's own statistics rule
 * (|N-B| / (max(|N|,|B|) + 1e-10) > 0.5 on any statistic) is reported beside it, for a statistic
 * whose difference is also beyond the policy's agreement level (a mean of 1e-9 against 2e-9 alone
 * is not a divergence).
 */
export function statDrift(
  n: TensorStats,
  b: TensorStats,
  passDrift: number,
): { drift: number; msprobeWarning: boolean } {
  const MSPROBE = precisionLimits().msprobe;
  const num = (x: number | null) => x ?? 0;
  const scale =
    Math.max(
      Math.abs(num(n.max)),
      Math.abs(num(n.min)),
      Math.abs(num(b.max)),
      Math.abs(num(b.min)),
    ) + MSPROBE.epsilon;
  const normScale = Math.max(Math.abs(num(n.norm)), Math.abs(num(b.norm))) + MSPROBE.epsilon;
  const pairs: [number, number, number][] = [
    [num(n.max), num(b.max), scale],
    [num(n.min), num(b.min), scale],
    [num(n.mean), num(b.mean), scale],
    [num(n.norm), num(b.norm), normScale],
  ];
  let drift = 0;
  let msprobeWarning = false;
  for (const [x, y, s] of pairs) {
    const d = Math.abs(x - y) / s;
    if (d > drift) drift = d;
    const magnitude = Math.abs(x - y) / (Math.max(Math.abs(x), Math.abs(y)) + MSPROBE.epsilon);
    if (magnitude > MSPROBE.magnitude && d > passDrift) msprobeWarning = true;
  }
  return { drift, msprobeWarning };
}

const FLOATS = new Set(['float32', 'float64', 'float16', 'bfloat16', 'float', 'half']);
const POLICY_DTYPE: Record<DtypePolicy, string> = {
  fp32: 'float32',
  bf16: 'bfloat16',
  fp16: 'float16',
};

/** Reads the capped float32 copy of an output (tensor mode), or null when it was not kept. */
export type TensorReader = (
  side: 'baseline' | 'target',
  data: { offset: number; count: number },
) => Float32Array | null;

interface OutputVerdict {
  result: PrecisionResult;
  reason: Reason;
  drift: number | null;
  metrics: TensorMetrics | null;
}

function compareOutput(
  n: TensorStats,
  b: TensorStats,
  dtype: DtypePolicy,
  tol: Tolerance,
  read: TensorReader | null,
): OutputVerdict {
  if (n.shape.join(',') !== b.shape.join(','))
    return {
      result: 'error',
      reason: { key: 'reason.shape', params: { target: `[${n.shape}]`, baseline: `[${b.shape}]` } },
      drift: null,
      metrics: null,
    };
  const dtypeOk =
    n.dtype === b.dtype ||
    (FLOATS.has(n.dtype) &&
      FLOATS.has(b.dtype) &&
      (n.dtype === POLICY_DTYPE[dtype] || dtype !== 'fp32'));
  if (!dtypeOk)
    return {
      result: 'error',
      reason: { key: 'reason.dtype', params: { target: n.dtype, baseline: b.dtype } },
      drift: null,
      metrics: null,
    };
  if ((n.nan || n.inf) && !(b.nan || b.inf))
    return { result: 'error', reason: { key: 'reason.nanInf' }, drift: null, metrics: null };
  // md5 mode: the checksums are the comparison (msprobe: pass when equal, else Different)
  if (n.md5 !== undefined && b.md5 !== undefined && n.md5 !== b.md5)
    return {
      result: 'error',
      reason: { key: 'reason.md5', params: { target: n.md5, baseline: b.md5 } },
      drift: null,
      metrics: null,
    };

  let result: PrecisionResult = 'pass';
  let reason: Reason = null;
  const raise = (r: PrecisionResult, why: Reason) => {
    if (RANK[r] > RANK[result]) {
      result = r;
      reason = why;
    }
  };
  const { drift, msprobeWarning } = statDrift(n, b, tol.passDrift);
  const driftParams = { drift: fmt(drift), dtype, limit: fmt(tol.errorDrift) };
  if (drift > tol.errorDrift) raise('error', { key: 'reason.drift', params: driftParams });
  else if (drift > tol.passDrift)
    raise(
      'warning',
      dtype === 'fp32'
        ? { key: 'reason.drift', params: driftParams }
        : { key: 'reason.withinTolerance', params: { dtype, drift: fmt(drift) } },
    );
  if (msprobeWarning) raise('warning', { key: 'reason.drift', params: driftParams });

  let metrics: TensorMetrics | null = null;
  const nd = read && n.data ? read('target', n.data) : null;
  const bd = read && b.data ? read('baseline', b.data) : null;
  if (read && n.data && b.data && (!nd || !bd))
    raise('warning', {
      key: 'reason.tensorUnread',
      params: { file: !bd ? 'baseline.bin' : 'target.bin' },
    });
  if (nd && bd) {
    const MSPROBE = precisionLimits().msprobe;
    const m = (metrics = tensorMetrics(nd, bd));
    const relAbs = m.maxAbsErr / (m.scale + MSPROBE.epsilon);
    // msprobe's "Accuracy Reached or Not": No if (cos < 0.99 and MaxAbsErr > 0.001), cos < 0.9, MaxAbsErr > 1
    const msprobeNo =
      (m.cosine < MSPROBE.cosine && m.maxAbsErr > MSPROBE.maxAbs) ||
      m.cosine < MSPROBE.cosineMax ||
      m.maxAbsErr > MSPROBE.maxAbsMax;
    const cosReason: Reason = {
      key: 'reason.cosine',
      params: { cosine: m.cosine.toFixed(7), dtype, limit: String(tol.errorCosine) },
    };
    const absReason: Reason = {
      key: 'reason.maxAbs',
      params: { err: fmt(relAbs), dtype, limit: fmt(tol.errorAbs) },
    };
    if (m.cosine < tol.errorCosine) raise('error', cosReason);
    else if (relAbs > tol.errorAbs) raise('error', absReason);
    else if (msprobeNo) raise('error', m.cosine < MSPROBE.cosine ? cosReason : absReason);
    else if (m.cosine < tol.passCosine || relAbs > tol.passAbs)
      raise(
        'warning',
        dtype === 'fp32'
          ? m.cosine < tol.passCosine
            ? cosReason
            : absReason
          : { key: 'reason.withinTolerance', params: { dtype, drift: fmt(relAbs) } },
      );
  }
  return { result, reason, drift, metrics };
}

const keyOf = (m: Pick<RawModuleRecord, 'module' | 'call' | 'kind'>) =>
  `${m.kind ?? 'forward'}\u0000${m.module}\u0000${m.call}`;
/** A record's name in the comparison (and in `precision.dumps`' `module`): path, call, grad. */
export const label = (m: Pick<RawModuleRecord, 'module' | 'call' | 'kind'>) =>
  `${m.module || '(model)'}${m.call ? ` #${m.call + 1}` : ''}${m.kind === 'grad' ? ' (grad)' : ''}`;

/**
 * Module by module in the baseline's execution order: each output of the target against the
 * baseline's, the worst output deciding the module's result. A module found on one side only is
 * listed as unmatched (and is an error where its turn comes).
 */
export function compareDumps(
  baseline: RawModuleRecord[],
  target: RawModuleRecord[],
  opts: { dtype: DtypePolicy; mode: PrecisionMode; read?: TensorReader | null },
): PrecisionCompareResult {
  const tol = precisionLimits().tolerances[opts.dtype];
  const byKey = new Map<string, RawModuleRecord>();
  for (const m of target) byKey.set(keyOf(m), m);
  const seen = new Set<string>();
  const modules: ModuleCompare[] = [];
  const unmatched: PrecisionCompareResult['unmatched'] = [];
  const counts = { pass: 0, warning: 0, error: 0 };
  for (const b of baseline) {
    const k = keyOf(b);
    const n = byKey.get(k);
    const row: ModuleCompare = {
      module: label(b),
      order: modules.length,
      cls: b.cls,
      source: n?.callSite ?? b.callSite ?? n?.classSource ?? b.classSource ?? null,
      kind: b.kind ?? 'forward',
      result: 'pass',
      reason: null,
      cosine: null,
      maxAbsErr: null,
      maxRelErr: null,
      meanRelErr: null,
      oneThousandthRatio: null,
      fiveThousandthsRatio: null,
      statDrift: null,
      baseline: b.outputs[0] ?? null,
      target: n?.outputs[0] ?? null,
    };
    if (!n) {
      unmatched.push({ module: row.module, side: 'baseline' });
      row.result = 'error';
      row.reason = { key: 'reason.missing', params: { side: 'target' } };
    } else {
      seen.add(k);
      if (n.outputs.length !== b.outputs.length) {
        row.result = 'error';
        row.reason = {
          key: 'reason.missing',
          params: { side: n.outputs.length < b.outputs.length ? 'target' : 'baseline' },
        };
      }
      const len = Math.min(n.outputs.length, b.outputs.length);
      for (let i = 0; i < len; i++) {
        const v = compareOutput(n.outputs[i]!, b.outputs[i]!, opts.dtype, tol, opts.read ?? null);
        if (RANK[v.result] > RANK[row.result as PrecisionResult]) {
          row.result = v.result;
          row.reason = v.reason;
        }
        if (v.drift !== null) row.statDrift = Math.max(row.statDrift ?? 0, v.drift);
        const m = v.metrics;
        if (m) {
          row.cosine = Math.min(row.cosine ?? 1, m.cosine);
          row.maxAbsErr = Math.max(row.maxAbsErr ?? 0, m.maxAbsErr);
          row.maxRelErr = Math.max(row.maxRelErr ?? 0, m.maxRelErr);
          row.meanRelErr = Math.max(row.meanRelErr ?? 0, m.meanRelErr);
          row.oneThousandthRatio = Math.min(row.oneThousandthRatio ?? 1, m.oneThousandthRatio);
          row.fiveThousandthsRatio = Math.min(
            row.fiveThousandthsRatio ?? 1,
            m.fiveThousandthsRatio,
          );
        }
      }
    }
    counts[row.result as PrecisionResult]++;
    modules.push(row);
  }
  for (const n of target)
    if (!seen.has(keyOf(n)) && !byKeyHas(baseline, n))
      unmatched.push({ module: label(n), side: 'target' });
  return {
    dtype: opts.dtype,
    mode: opts.mode,
    counts,
    firstDivergence: firstDivergence(modules),
    modules,
    unmatched,
  };
}

// target-only modules: those whose key the baseline never had (cheap: baseline keys as a set)
const baselineKeys = new WeakMap<RawModuleRecord[], Set<string>>();
function byKeyHas(baseline: RawModuleRecord[], n: RawModuleRecord): boolean {
  let set = baselineKeys.get(baseline);
  if (!set) baselineKeys.set(baseline, (set = new Set(baseline.map(keyOf))));
  return set.has(keyOf(n));
}

/** The first module in execution order whose result is not pass. */
export function firstDivergence(modules: ModuleCompare[]): FirstDivergence | null {
  const m = modules.find((x) => x.result === 'warning' || x.result === 'error');
  return m
    ? {
        module: m.module,
        order: m.order,
        source: m.source,
        cosine: m.cosine,
        maxAbsErr: m.maxAbsErr,
        maxRelErr: m.maxRelErr,
        statDrift: m.statDrift,
        result: m.result as PrecisionResult,
        review: null,
      }
    : null;
}
