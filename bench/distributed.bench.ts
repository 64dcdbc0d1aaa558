// Distributed-stage figures on a simulated fleet: 32 hosts, each in its own network namespace with
// its own address, hostname and real sshd (e2e/hosts/netns.ts), the stub hccn_tool (a test double
// printing the real samples) under /usr/local/Ascend. One probe of the whole fleet is timed — wall
// time and CPU time (this process, and the whole machine from /proc/stat, since the 32 simulated
// hosts' sshd and shells share its cores) — then a real torchrun gloo all_reduce across a few hosts.
// `AMW_BENCH_HOSTS=N` changes the fleet size, `AMW_BENCH_COLLECTIVE=N` the collective's (0: none).
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { netnsFleetSupported, startNetnsFleet } from '../e2e/hosts/netns';
import { fleetService, type FleetService } from '../e2e/hosts/netns-hosts';
import type { JobContext } from '../electron/core/jobs/runner';
import { runCollective } from '../electron/core/stages/distributed/collective';
import { remoteCommand } from '../electron/core/ssh/quote';
import { HCCN_TOOL_PATH, hccnToolFiles } from '../tests/support/hccn-tool';

const support = netnsFleetSupported();
if (!support.ok) {
  console.log(`distributed bench skipped: ${support.reason}`);
  process.exit(0);
}
const N = Number(process.env.AMW_BENCH_HOSTS ?? 32);
const COLLECTIVE = Number(process.env.AMW_BENCH_COLLECTIVE ?? 3);
const DEVICES = 8;
const OPTIONS = ['-link', '-ip', '-net_health', '-netdetect', '-tls', '-optical', '-lldp', '-stat'];

const ms = (from: bigint) => Number(process.hrtime.bigint() - from) / 1e6;
const ctx = (signal = new AbortController().signal): JobContext => ({
  signal,
  progress: () => undefined,
  throwIfCancelled: () => undefined,
});

/**
 * THE probe being timed — the one function to switch to the distributed stage's own probe once it
 * is merged. Until then: the fleet inventory (HostService.fleetInventory, bounded concurrency) and,
 * per host, one SSH round trip calling hccn_tool for every device and option serially (hccn_tool
 * is not concurrency-safe on one host), hosts in parallel, 8 at a time.
 */
async function probeFleet(service: FleetService, names: string[]) {
  let t = process.hrtime.bigint();
  const inventory = await service.hosts.fleetInventory(names, ctx());
  const inventoryMs = ms(t);
  t = process.hrtime.bigint();
  const script = Array.from({ length: DEVICES }, (_, i) =>
    OPTIONS.map((o) => remoteCommand(HCCN_TOOL_PATH, '-i', String(i), o, '-g')).join('\n'),
  ).join('\n');
  const queue = [...names];
  const hccn: { host: string; ok: boolean; lines: number }[] = [];
  await Promise.all(
    Array.from({ length: Math.min(8, names.length) }, async () => {
      for (let name = queue.shift(); name; name = queue.shift()) {
        try {
          const r = await service.hosts
            .transport(name)
            .exec('sh -s', { stdin: script, timeoutMs: 120_000 });
          const links = (r.stdout.match(/^link status: (UP|DOWN)$/gm) ?? []).length;
          hccn.push({ host: name, ok: links === DEVICES, lines: r.stdout.split('\n').length });
        } catch {
          hccn.push({ host: name, ok: false, lines: 0 });
        }
      }
    }),
  );
  return { inventory, hccn, inventoryMs, hccnMs: ms(t) };
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
  profile: (i) => (i % 4 === 3 ? 'ascend-310p-duo' : 'ascend-910b'),
  hostOptions: (i) => ({ usrLocalFiles: hccnToolFiles(i === 5 ? { link: { '3': 'DOWN' } } : {}) }),
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
    const invOk = r.inventory.filter((x) => x.ok).length;
    const hccnOk = r.hccn.filter((x) => x.ok).length;
    console.log(
      `${label}: ${wall.toFixed(0)} ms wall (inventory ${r.inventoryMs.toFixed(0)} ms, hccn_tool sweep ${r.hccnMs.toFixed(0)} ms; the stub is a Python script, one interpreter start per call); inventory ${invOk}/${N} ok, hccn_tool sweep ${hccnOk}/${N} hosts complete (${DEVICES} devices × ${OPTIONS.length} options = ${DEVICES * OPTIONS.length} calls each, ${r.hccn.length * DEVICES * OPTIONS.length} in all; one host has a link DOWN, still complete)`,
    );
    console.log(
      `  CPU: workbench ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms; whole machine ${busy.toFixed(0)} ms busy over ${cpus().length} cores (the simulated hosts' sshd, shells and probes included — real hosts bring their own)`,
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
