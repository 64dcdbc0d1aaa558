import type {
  ProfileCompare,
  ProfileCompareRow,
  ProfileResult,
} from '../../../../shared/stages/profiling/api';

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);

/** A profile's mean step time (µs): every step of every rank counts once. */
export function meanStepUs(r: ProfileResult): number | null {
  return mean(r.stepTimes.map((s) => s.us));
}

function rows(
  a: Record<string, { us: number }> | undefined,
  b: Record<string, { us: number }> | undefined,
  limit: number,
): ProfileCompareRow[] {
  const names = new Set([...Object.keys(a ?? {}), ...Object.keys(b ?? {})]);
  return [...names]
    .map((name) => {
      const aUs = a?.[name]?.us ?? null;
      const bUs = b?.[name]?.us ?? null;
      return { name, aUs, bUs, ratio: aUs && bUs !== null ? bUs / aUs : null };
    })
    .sort((x, y) => Math.max(y.aUs ?? 0, y.bUs ?? 0) - Math.max(x.aUs ?? 0, x.bUs ?? 0))
    .slice(0, limit);
}

/**
 * b against a: a before/after pair, or an NPU run (b) against its GPU baseline (a). Step time,
 * each category of the breakdown (mean per step), kernel time by task type and by op type, the
 * framework ops of the timelines side by side where the names are the same (aten ops), and which
 * advice went away or came.
 */
export function compareProfiles(a: ProfileResult, b: ProfileResult): ProfileCompare {
  const aStep = meanStepUs(a);
  const bStep = meanStepUs(b);
  const cat = (
    r: ProfileResult,
    k: 'computingUs' | 'communicationNotOverlappedUs' | 'freeUs' | 'bubbleUs',
  ) => mean(r.steps.map((s) => s[k]));
  const categories = (
    [
      ['computing', 'computingUs'],
      ['communicationNotOverlapped', 'communicationNotOverlappedUs'],
      ['free', 'freeUs'],
      ['bubble', 'bubbleUs'],
    ] as const
  ).map(([name, k]) => {
    const aUs = cat(a, k);
    const bUs = cat(b, k);
    return { name, aUs, bUs, diffUs: aUs !== null && bUs !== null ? bUs - aUs : null };
  });
  const ops = (r: ProfileResult) =>
    Object.fromEntries((r.timeline?.ops ?? []).map((o) => [o.name, { us: o.us }]));
  const byOpType = rows(a.kernels?.byOpType, b.kernels?.byOpType, 100);
  const timelineOps = rows(ops(a), ops(b), 100).filter((r) => r.aUs !== null && r.bUs !== null);
  const aIds = new Set(a.advice.map((x) => x.id));
  const bIds = new Set(b.advice.map((x) => x.id));
  return {
    a: { source: a.source, kind: a.kind, stepUs: aStep },
    b: { source: b.source, kind: b.kind, stepUs: bStep },
    stepRatio: aStep && bStep !== null ? bStep / aStep : null,
    categories,
    byTaskType: rows(a.kernels?.byTaskType, b.kernels?.byTaskType, 50),
    byOpType: byOpType.length ? byOpType : timelineOps,
    advice: {
      fixed: [...aIds].filter((id) => !bIds.has(id)),
      added: [...bIds].filter((id) => !aIds.has(id)),
      kept: [...aIds].filter((id) => bIds.has(id)),
    },
  };
}
