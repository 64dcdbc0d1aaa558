import type { OpClass, OpsCompareRow, OpsResult } from '../../../../shared/stages/ops/api';

const RANK: Record<OpClass, number> = {
  direct: 0,
  'needs-change': 1,
  'cpu-fallback': 2,
  unsupported: 3,
};

/**
 * Op by op, what changed between two classifications (two runs, or one run for two torch_npu
 * versions): "moving to 2.7.1 removes these fallbacks" is the improved rows.
 */
export function compareOps(
  a: OpsResult,
  b: OpsResult,
): { a: OpsResult['breakdown']; b: OpsResult['breakdown']; rows: OpsCompareRow[] } {
  const key = (o: { op: string; overload: string }) => `${o.op}.${o.overload}`;
  const left = new Map(a.ops.map((o) => [key(o), o]));
  const right = new Map(b.ops.map((o) => [key(o), o]));
  const rows: OpsCompareRow[] = [];
  for (const k of new Set([...left.keys(), ...right.keys()])) {
    const x = left.get(k);
    const y = right.get(k);
    const change: OpsCompareRow['change'] = !x
      ? 'new'
      : !y
        ? 'gone'
        : RANK[y.class] < RANK[x.class]
          ? 'improved'
          : RANK[y.class] > RANK[x.class]
            ? 'regressed'
            : 'same';
    rows.push({
      op: (x ?? y)!.op,
      overload: (x ?? y)!.overload,
      a: x?.class ?? null,
      b: y?.class ?? null,
      change,
    });
  }
  const order = { regressed: 0, improved: 1, new: 2, gone: 3, same: 4 };
  rows.sort((p, q) => order[p.change] - order[q.change] || p.op.localeCompare(q.op));
  return { a: a.breakdown, b: b.breakdown, rows };
}
