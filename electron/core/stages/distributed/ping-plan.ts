import type { PingPlan } from '../../../../shared/stages/distributed/api';
import type { FleetRules } from './knowledge';

export interface PingPair {
  from: { host: string; device: number };
  to: { host: string; device: number };
}

/**
 * Which NPU pings which (knowledge §7.3 note 2), across hosts only (inside a server HCCL goes over
 * HCCS, and A3's two dies of one NPU cannot ping each other). Up to `allPairsUpToDevices` NPUs in
 * the fleet: every ordered pair on different hosts (both directions, as the knowledge asks).
 * Above it, all pairs grows as N² (128 hosts × 16 NPUs would be 4 million pings, serial on each
 * host at about a second each), so: a ring — NPU i of host k pings NPU i of host k+1 (the
 * same-index NICs HCCL's rings use; the last host wraps to the first, so each NIC is pinged and
 * pings once) — plus `samples` cross-host pairs drawn with a PRNG seeded by the host names, so a
 * rerun of the same fleet pings the same pairs and results compare.
 */
export function pingPlan(
  hosts: { host: string; devices: number[] }[],
  rules: FleetRules,
): PingPlan & { list: PingPair[] } {
  const all = hosts.flatMap((h) => h.devices.map((device) => ({ host: h.host, device })));
  const list: PingPair[] = [];
  if (all.length <= rules.pingMatrix.allPairsUpToDevices) {
    for (const from of all)
      for (const to of all) if (from.host !== to.host) list.push({ from, to });
    return { rule: 'all-pairs', pairs: list.length, devices: all.length, list };
  }
  const seen = new Set<string>();
  const add = (from: PingPair['from'], to: PingPair['to']) => {
    const k = `${from.host}#${from.device}>${to.host}#${to.device}`;
    if (from.host === to.host) return;
    if (seen.has(k)) return;
    seen.add(k);
    list.push({ from, to });
  };
  hosts.forEach((h, k) => {
    const next = hosts[(k + 1) % hosts.length]!;
    if (next === h) return;
    for (const device of h.devices)
      if (next.devices.includes(device)) add({ host: h.host, device }, { host: next.host, device });
  });
  let seed = 2166136261;
  for (const ch of hosts.map((h) => h.host).join(','))
    seed = Math.imul(seed ^ ch.charCodeAt(0), 16777619) >>> 0;
  const rand = () => {
    // xorshift32: small, deterministic, good enough to spread samples
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) / 4294967296;
  };
  let left = rules.pingMatrix.samples;
  for (let tries = 0; left > 0 && tries < rules.pingMatrix.samples * 8; tries++) {
    const before = list.length;
    add(all[Math.floor(rand() * all.length)]!, all[Math.floor(rand() * all.length)]!);
    if (list.length > before) left--;
  }
  return { rule: 'ring-sampled', pairs: list.length, devices: all.length, list };
}
