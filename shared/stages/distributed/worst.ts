import type { CheckStatus } from '../../api/stages';

/**
 * How bad a status is in a fleet-matrix cell. `skip` (not applicable: no NPU, no hccn_tool) is
 * below `pass`, so a cell whose every outcome was skipped reads as skipped — it once showed ✓
 * for "hccn_tool readable" on a machine without hccn_tool.
 */
const SEVERITY: Record<CheckStatus, number> = { skip: 0, pass: 1, warn: 2, fail: 3, error: 4 };

export const severity = (s: string): number => SEVERITY[s as CheckStatus] ?? 0;

/** The worst status among a cell's outcomes; `skip` for none. */
export function worstStatus(statuses: readonly string[]): CheckStatus {
  let worst: CheckStatus = 'skip';
  for (const s of statuses) if (severity(s) > severity(worst)) worst = s as CheckStatus;
  return worst;
}
