import type { Disagreement, HostDistFacts } from '../../../../shared/stages/distributed/api';
import type { FleetRules } from './knowledge';

/**
 * The value most hosts share ("the fleet's"); ties go to the value that sorts first, so a result
 * does not depend on the order hosts answered in. Nulls (unknown) do not vote.
 */
export function majority(values: (string | null)[]): string | null {
  const counts = new Map<string, number>();
  for (const v of values) if (v !== null) counts.set(v, (counts.get(v) ?? 0) + 1);
  let best: string | null = null;
  let n = 0;
  for (const [v, c] of [...counts].sort((a, b) => a[0].localeCompare(b[0])))
    if (c > n) [best, n] = [v, c];
  return best;
}

/** A host's TLS switch over its NPUs: '1', '0', 'mixed', or null (none read). */
export function tlsValue(h: HostDistFacts): string | null {
  const seen = new Set(h.devices.flatMap((d) => (d.tls ? [d.tls.enabled ? '1' : '0'] : [])));
  return seen.size === 0 ? null : seen.size > 1 ? 'mixed' : [...seen][0]!;
}

/** The HCCL_* (and related) names any answering host sets, minus the per-host ones. */
export function sharedEnvNames(hosts: HostDistFacts[], rules: FleetRules): string[] {
  const names = new Set<string>();
  for (const h of hosts) for (const k of Object.keys(h.env)) names.add(k);
  return [...names].filter((k) => !rules.env.perHost.includes(k)).sort();
}

/** What should be the same on every answering host and is not, each host's value shown. */
export function disagreements(hosts: HostDistFacts[], rules: FleetRules): Disagreement[] {
  const up = hosts.filter((h) => h.reachable);
  const items: [string, (h: HostDistFacts) => string | null][] = [
    ['tls', tlsValue],
    ['cann', (h) => h.cann],
    ['driver', (h) => h.driver],
    ['firmware', (h) => h.firmware],
    ...sharedEnvNames(up, rules).map(
      (k) =>
        [k, (h: HostDistFacts) => h.env[k] ?? null] as [
          string,
          (h: HostDistFacts) => string | null,
        ],
    ),
  ];
  const out: Disagreement[] = [];
  for (const [item, get] of items) {
    const values = up.map((h) => ({ host: h.host, value: get(h) }));
    // env: an unset variable is a value (unset here, set there); versions: unknown is not
    const distinct = new Set(
      values.filter((v) => v.value !== null || item.startsWith('HCCL_')).map((v) => v.value),
    );
    if (item === 'tls' && values.some((v) => v.value === 'mixed')) out.push({ item, values });
    else if (distinct.size > 1) out.push({ item, values });
  }
  return out;
}

/** Total ranks the fleet would run: its NPUs, or one per host where there are none. */
export function fleetRanks(hosts: HostDistFacts[]): number {
  return hosts
    .filter((h) => h.reachable)
    .reduce((n, h) => n + (h.npuCount > 0 ? h.npuCount : 1), 0);
}

/** `8.1.RC1` → [8, 1]; null when not a CANN version. */
export function cannMajorMinor(v: string | null): [number, number] | null {
  const m = v ? /^(\d+)\.(\d+)/.exec(v) : null;
  return m ? [Number(m[1]), Number(m[2])] : null;
}

/** HCCL's host port block on this host: from HCCL_IF_BASE_PORT, 16 ports up to CANN 8.1, 32 after. */
export function hcclPorts(h: HostDistFacts, rules: FleetRules): { from: number; to: number } {
  const base = Number(h.env.HCCL_IF_BASE_PORT);
  const from = Number.isInteger(base) && base >= 1024 && base <= 65520 ? base : rules.ports.base;
  const mm = cannMajorMinor(h.cann);
  const old = mm !== null && (mm[0] < 8 || (mm[0] === 8 && mm[1] <= 1));
  return { from, to: from + (old ? rules.ports.blockUpTo81 : rules.ports.blockFrom82) - 1 };
}
