// Host figures on simulated Ascend hosts (real sshd): SSH round trips per inventory and per env
// stage, counted from sshd's own session log; wall times next to a bare `ssh host true`; one host
// against 16 at once.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCore } from '../electron/core/api/core';
import {
  registerSimHost,
  simHostsSupported,
  startSimHost,
  type SimHost,
} from '../e2e/hosts/sim-host';

const support = simHostsSupported();
if (!support.ok) {
  console.log(`inventory bench skipped: ${support.reason}`);
  process.exit(0);
}
const home = mkdtempSync(join(tmpdir(), 'amw-bench-inv-'));
const N = 16;
const hosts: SimHost[] = await Promise.all(
  Array.from({ length: N }, (_, i) =>
    startSimHost(`b${i}`, i % 4 === 3 ? 'ascend-310p-duo' : 'ascend-910b', { verbose: true }),
  ),
);
const core = createCore({
  env: { AMW_HOME: home } as NodeJS.ProcessEnv,
  hostKeyPolicy: 'accept-new',
  userKnownHosts: [],
});
const sessions = (h: SimHost) => (h.log().match(/Starting session/g) ?? []).length;
try {
  for (const h of hosts) {
    await registerSimHost(core, h, { group: 'bench' });
  }
  // connect every host once (key accepted, connection pooled), so the figures below are after connecting
  for (const h of hosts) await core.call('hosts.test', { name: h.name });

  const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;
  const h0 = hosts[0]!;
  let t0 = process.hrtime.bigint();
  execFileSync('ssh', [
    '-i',
    h0.clientKey,
    '-p',
    String(h0.port),
    '-o',
    'StrictHostKeyChecking=no',
    '-o',
    'UserKnownHostsFile=/dev/null',
    '-o',
    'LogLevel=ERROR',
    '-o',
    'BatchMode=yes',
    `${h0.user}@${h0.host}`,
    'true',
  ]);
  const bare = ms(t0);

  const settle = () => new Promise((r) => setTimeout(r, 300)); // sshd's log arrives asynchronously
  await settle();
  const before = sessions(h0);
  t0 = process.hrtime.bigint();
  const { jobId } = await core.call('inventory.take', { name: h0.name });
  const one = await core.jobs.wait(jobId);
  const oneMs = ms(t0);
  if (one.status !== 'succeeded') throw new Error(JSON.stringify(one.error));
  await settle();
  const trips = sessions(h0) - before;

  const beforeEnv = sessions(h0);
  t0 = process.hrtime.bigint();
  const stage = await core.jobs.wait(
    (await core.call('stages.run', { host: h0.name, stage: 'env' })).jobId,
  );
  const envMs = ms(t0);
  if (stage.status !== 'succeeded') throw new Error(JSON.stringify(stage.error));
  await settle();
  const envTrips = sessions(h0) - beforeEnv;

  t0 = process.hrtime.bigint();
  const cpu0 = process.cpuUsage();
  const fleet = await core.jobs.wait(
    (await core.call('fleet.inventory', { group: 'bench' })).jobId,
  );
  const fleetMs = ms(t0);
  const cpu = process.cpuUsage(cpu0);
  const workbenchCpuMs = (cpu.user + cpu.system) / 1000;
  const ok = (fleet.result as { ok: boolean }[]).filter((r) => r.ok).length;

  console.log(`bare \`ssh host true\` (new connection, OpenSSH client): ${bare.toFixed(0)} ms`);
  console.log(
    `inventory, one host (pooled connection): ${oneMs.toFixed(0)} ms, SSH round trips (sshd sessions): ${trips}`,
  );
  console.log(
    `env stage, one host (10 checks, incl. two child Pythons importing torch): ${envMs.toFixed(0)} ms, SSH round trips: ${envTrips}`,
  );
  console.log(
    `inventory, ${N} hosts at once: ${fleetMs.toFixed(0)} ms (${ok}/${N} ok) = ${(fleetMs / oneMs).toFixed(2)}× one host`,
  );
  console.log(
    `  of which workbench CPU: ${workbenchCpuMs.toFixed(0)} ms; the rest is the ${N} simulated hosts' sshd and probe sharing this machine's ${(await import('node:os')).cpus().length} cores (real hosts each bring their own)`,
  );
} finally {
  await core.close();
  await Promise.all(hosts.map((h) => h.stop()));
  rmSync(home, { recursive: true, force: true });
}
