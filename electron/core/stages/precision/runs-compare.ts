import { msg } from '../../../../shared/api/text';
import type {
  ModuleCompare,
  PrecisionHistoryRow,
  PrecisionRunsCompare,
  PrecisionRunView,
} from '../../../../shared/stages/precision/api';

const RANK: Record<ModuleCompare['result'], number> = { none: -1, pass: 0, warning: 1, error: 2 };
/** Rows of changed / one-sided modules kept in the answer (the counts are always complete). */
export const CHANGED_MAX = 500;

const keyOf = (m: Pick<ModuleCompare, 'kind' | 'module'>) => `${m.kind}\u0000${m.module}`;

/**
 * Run b against run a, module by module (matched by name, call and kind): where the first
 * divergence went ("after fixing X, the first divergence moved from A to B"), which modules now
 * agree and which got worse. "Later" is judged in b's execution order: a's first diverging module
 * found in b, against b's first divergence.
 */
export function compareRuns(
  a: { row: PrecisionHistoryRow; view: PrecisionRunView },
  b: { row: PrecisionHistoryRow; view: PrecisionRunView },
): PrecisionRunsCompare {
  const fa = a.view.firstDivergence;
  const fb = b.view.firstDivergence;
  const inB = new Map(b.view.modules.map((m) => [keyOf(m), m]));
  const inA = new Map(a.view.modules.map((m) => [keyOf(m), m]));
  let moved: PrecisionRunsCompare['moved'];
  if (!fa && !fb) moved = 'none';
  else if (fa && !fb) moved = 'gone';
  else if (!fa && fb) moved = 'appeared';
  else if (fa!.module === fb!.module) moved = 'same';
  else {
    const aFirst = a.view.modules[fa!.order];
    const at = aFirst ? inB.get(keyOf(aFirst))?.order : undefined;
    moved = (at ?? fa!.order) < fb!.order ? 'later' : 'earlier';
  }
  const changed: PrecisionRunsCompare['changed'] = [];
  const onlyIn: PrecisionRunsCompare['onlyIn'] = [];
  const counts = { fixed: 0, regressed: 0, onlyA: 0, onlyB: 0 };
  for (const m of b.view.modules) {
    const was = inA.get(keyOf(m));
    if (!was) {
      counts.onlyB++;
      if (onlyIn.length < CHANGED_MAX) onlyIn.push({ module: m.module, run: 'b' });
      continue;
    }
    if (was.result === 'none' || m.result === 'none' || was.result === m.result) continue;
    const change = RANK[was.result] > RANK[m.result] ? 'fixed' : 'regressed';
    counts[change]++;
    if (changed.length < CHANGED_MAX)
      changed.push({ module: m.module, order: m.order, a: was.result, b: m.result, change });
  }
  for (const m of a.view.modules)
    if (!inB.has(keyOf(m))) {
      counts.onlyA++;
      if (onlyIn.length < CHANGED_MAX) onlyIn.push({ module: m.module, run: 'a' });
    }
  const at = (f: typeof fa) =>
    f ? { module: f.module, order: f.order, source: f.source ?? null } : null;
  return {
    a: a.row,
    b: b.row,
    first: { a: at(fa), b: at(fb) },
    moved,
    summary: msg(`stage-precision:runs.${moved}`, {
      a: a.row.stageRunId,
      b: b.row.stageRunId,
      from: fa?.module ?? '',
      to: fb?.module ?? '',
    }),
    changed,
    onlyIn,
    counts,
  };
}
