// Distributed-stage figures on a simulated fleet: 32 hosts, each in its own network namespace with
// its own address, hostname and real sshd (e2e/hosts/netns.ts), the stub hccn_tool (a test double
// printing the real samples) under /usr/local/Ascend. The distributed stage's own probe of the whole
// fleet (and its fleet checks) is timed — wall
// time and CPU time (this process, and the whole machine from /proc/stat, since the 32 simulated
// hosts' sshd and shells share its cores) — then a real torchrun gloo all_reduce across a few hosts.
// `AMW_BENCH_HOSTS=N` changes the fleet size, `AMW_BENCH_COLLECTIVE=N` the collective's (0: none).
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { netnsFleetSupported, startNetnsFleet } from '../e2e/hosts/netns';
import { fleetService, type FleetService } from '../e2e/hosts/netns-hosts';
import type { JobContext } from '../electron/core/jobs/runner';
import { runCollective } from '../electron/core/stages/distributed/collective';
import { FLEET_CHECKS, evaluateFleet } from '../electron/core/stages/distributed/checks';
import { fleetRules } from '../electron/core/stages/distributed/knowledge';
import { probeFleet as stageProbe } from '../electron/core/stages/distributed/probe-fleet';
import { generateRankTable } from '../electron/core/stages/distributed/rank-table';
import { hccnToolFiles } from '../tests/support/hccn-tool';

const support = netnsFleetSupported();
if (!support.ok) {
  console.log(`distributed bench skipped: ${support.reason}`);
  process.exit(0);
}
const N = Number(process.env.AMW_BENCH_HOSTS ?? 32);
const COLLECTIVE = Number(process.env.AMW_BENCH_COLLECTIVE ?? 3);
const DEVICES = 8;
/** The stage's default fan-out (definition.ts DEFAULTS.concurrency). */
const CONCURRENCY = Number(process.env.AMW_BENCH_CONCURRENCY ?? 16);
const OPTIONS = ['-link', '-ip', '-net_health', '-netdetect', '-tls', '-optical', '-lldp', '-stat'];

const ms = (from: bigint) => Number(process.hrtime.bigint() - from) / 1e6;

/**
 * THE probe being timed: the distributed stage's own (probe-fleet.ts) — one round trip per host
 * (inventory + every NPU's hccn_tool getters serially + HCCL environment, memlock, hccn.conf,
 * firewall, NICs), hosts in parallel up to the stage's default limit, each with its own timeout —
 * then the stage's pure fleet checks over the facts. Per host: when its answer was in (the
 * progress the stage reports as each host finishes).
 */
async function probeFleet(service: FleetService, names: string[]) {
  const rules = fleetRules();
  const t = process.hrtime.bigint();
  const doneAt: number[] = [];
  const job: JobContext = {
    signal: new AbortController().signal,
    progress: (_f, m) => {
      if (m?.key === 'fleetHost') doneAt.push(ms(t));
    },
    throwIfCancelled: () => undefined,
  };
  const { facts } = await stageProbe(
    names,
    { hosts: service.hosts, hostRepo: service.repo },
    job,
    rules,
    {
      concurrency: CONCURRENCY,
      hostTimeoutMs: 120_000,
    },
  );
  const probeMs = ms(t);
  const c = process.hrtime.bigint();
  const cpu0 = process.cpuUsage();
  const outcomes = evaluateFleet(
    FLEET_CHECKS,
    {
      hosts: facts,
      rankTable: generateRankTable(facts),
      collective: null,
      collectiveState: 'off',
      blockedHosts: 0,
      pings: [],
      pingPlan: { rule: 'all-pairs', pairs: 0, devices: 0 },
    },
    rules,
  );
  const checksCpu = process.cpuUsage(cpu0);
  return {
    facts,
    outcomes: outcomes.length,
    probeMs,
    checksMs: ms(c),
    checksCpuMs: (checksCpu.user + checksCpu.system) / 1000,
    doneAt: doneAt.sort((x, y) => x - y),
  };
}

/** Busy CPU time of the whole machine (all cores) from /proc/stat, in ms. */
function machineBusyMs(): number {
  const f = readFileSync('/proc/stat', 'utf8')
    .split('\n')[0]!
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  const [user, nice, system, , , irq, softirq, steal] = f as number[];
  const hz = 100; // USER_HZ on Linux
  return ((user! + nice! + system! + irq! + softirq! + (steal ?? 0)) * 1000) / hz;
}

let t0 = process.hrtime.bigint();
const fleet = await startNetnsFleet(N, {
  prefix: 'bd',
  profile: 'hccn-ok',
  hostOptions: (i) => ({
    usrLocalFiles: hccnToolFiles({
      ...(i === 5 ? { link: { '3': 'DOWN' } } : {}),
      // each host its own NPU subnet, as a real fleet's
      ip: Object.fromEntries(
        Array.from({ length: DEVICES }, (_, d) => [
          String(d),
          `10.${200 + (i >> 8)}.${i & 255}.${d + 10}`,
        ]),
      ),
    }),
  }),
});
const startMs = ms(t0);
const service = fleetService(fleet);
const names = fleet.hosts.map((h) => h.name);
try {
  const measure = async (label: string) => {
    const cpu0 = process.cpuUsage();
    const busy0 = machineBusyMs();
    const t = process.hrtime.bigint();
    const r = await probeFleet(service, names);
    const wall = ms(t);
    const cpu = process.cpuUsage(cpu0);
    const busy = machineBusyMs() - busy0;
    const ok = r.facts.filter((f) => f.reachable && f.devices.length === DEVICES).length;
    const calls = r.facts.reduce((n, f) => n + f.devices.length * OPTIONS.length, 0);
    const pct = (p: number) =>
      r.doneAt[Math.min(r.doneAt.length - 1, Math.floor(p * r.doneAt.length))] ?? 0;
    console.log(
      `${label}: ${wall.toFixed(0)} ms wall (probe ${r.probeMs.toFixed(0)} ms, fleet checks ${r.checksMs.toFixed(0)} ms for ${r.outcomes} outcomes); ${ok}/${N} hosts with all ${DEVICES} NPUs read (${calls} hccn_tool calls; the stub is a Python script, one interpreter start per call), ${CONCURRENCY} hosts at a time`,
    );
    console.log(
      `  per host: answer in after ${pct(0).toFixed(0)} ms (first) / ${pct(0.5).toFixed(0)} ms (median) / ${pct(1).toFixed(0)} ms (last); ${(r.probeMs / N).toFixed(0)} ms wall and ${((cpu.user + cpu.system) / 1000 / N).toFixed(1)} ms engine CPU per host`,
    );
    console.log(
      `  CPU: engine ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms (fleet checks ${r.checksCpuMs.toFixed(0)} ms of it); whole machine ${busy.toFixed(0)} ms busy over ${cpus().length} cores (the simulated hosts' sshd, shells and probes included — real hosts bring their own)`,
    );
  };
  console.log(
    `fleet of ${N} namespaces with sshd started in ${startMs.toFixed(0)} ms (not part of the probe)`,
  );
  await measure(`probe of ${N} hosts, cold (first connection to each)`);
  await measure(`probe of ${N} hosts, warm (pooled connections)`);

  if (COLLECTIVE > 1) {
    const hosts = service.collectiveHosts().slice(0, COLLECTIVE);
    const cpu0 = process.cpuUsage();
    const busy0 = machineBusyMs();
    t0 = process.hrtime.bigint();
    const r = await runCollective(hosts, {
      deadlineMs: 300_000,
      signal: new AbortController().signal,
      sizesBytes: [65536, 1 << 20, 16 << 20],
    });
    const wall = ms(t0);
    const cpu = process.cpuUsage(cpu0);
    console.log(
      `collective (torchrun ${r.backend}, ${r.worldSize} ranks on ${hosts.length} namespaces): ${r.ok ? 'ok' : `failed ${JSON.stringify(r.error)}`} in ${wall.toFixed(0)} ms wall, workbench CPU ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms, machine ${(machineBusyMs() - busy0).toFixed(0)} ms busy (torch imports dominate)`,
    );
    for (const b of r.bandwidth)
      console.log(
        `  ${String(b.bytes).padStart(9)} B: ${b.us.toFixed(0)} µs, algbw ${b.algBandwidthGBs.toFixed(3)} GB/s, busbw ${b.busBandwidthGBs.toFixed(3)} GB/s (veth + gloo on a shared CPU)`,
      );
  }
} finally {
  service.close();
  await fleet.destroy();
}
