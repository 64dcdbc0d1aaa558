/**
 * Faults on simulated hosts: sshd killed mid-stage, a host key changing mid-session, a lossy and
 * slow link (network namespace). Each must end in a state the user sees and can retry.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createCore, type Core } from '../../electron/core/api/core';
import {
  createSimNetwork,
  registerSimHost,
  simHostsSupported,
  startSimHost,
  type SimHost,
  type SimNetwork,
} from '../../e2e/hosts/sim-host';
import type { StageRunRecord } from '../../shared/api';
import { sh, slowNpuSmi, until } from './support';

const support = simHostsSupported();
const d = support.ok ? describe : describe.skip;
if (!support.ok) console.log(`fault tests on simulated hosts skipped: ${support.reason}`);

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

function newCore(): Core {
  const home = mkdtempSync(join(tmpdir(), 'amw-fault-'));
  const core = createCore({
    env: { AMW_HOME: home } as NodeJS.ProcessEnv,
    hostKeyPolicy: 'accept-new',
    userKnownHosts: [],
  });
  cleanups.push(async () => {
    await core.close();
    rmSync(home, { recursive: true, force: true });
  });
  return core;
}

async function sim(name: string, opts: { network?: SimNetwork } = {}): Promise<SimHost> {
  const s = await startSimHost(name, 'ascend-910b', { ...opts, listen: opts.network?.nsAddress });
  cleanups.push(() => s.stop());
  return s;
}

d('fault: sshd killed and restarted mid-stage', () => {
  it('the run ends failed-or-interrupted with a typed error, never "running" or passed; a rerun passes', async () => {
    const host = await sim('crash');
    const core = newCore();
    await registerSimHost(core, host);
    const slow = slowNpuSmi(host, 5);
    const { jobId } = await core.call('stages.run', { host: 'crash', stage: 'env' });
    await until(slow.started, 20_000, 'the probe to reach npu-smi');
    await host.restart(); // every process of the host ends, as in a crash; sshd comes back
    const job = await core.jobs.wait(jobId);
    expect(job.status).toBe('failed');
    expect(job.error?.code).toMatch(
      /^(DISCONNECTED|COMMAND_TIMEOUT|PROBE_FAILED|CONNECTION_REFUSED)$/,
    );
    const sessions = await core.call('sessions.list', {});
    const s = await core.call('sessions.get', { id: sessions[0]!.id });
    expect(s.runs.map((r) => r.status)).not.toContain('running');
    expect(s.runs.map((r) => r.status)).not.toContain('pass');
    // retry: the same stage in the same session, now that the host is back
    slowNpuSmi(host, 0);
    const again = await core.call('stages.run', { host: 'crash', stage: 'env', sessionId: s.id });
    const rerun = await core.jobs.wait(again.jobId);
    expect(rerun.status).toBe('succeeded');
    expect((rerun.result as StageRunRecord).checks).toHaveLength(10);
  }, 90_000);
});

d('fault: the host key changes mid-session', () => {
  it('a live connection drops, the reconnect is refused naming both fingerprints; nothing is trusted', async () => {
    const host = await sim('spoofed');
    const core = newCore();
    await registerSimHost(core, host);
    const first = await core.call('hosts.test', { name: 'spoofed' });
    expect(first.ok).toBe(true);
    const oldFp = host.hostKeyFingerprint;
    const slow = slowNpuSmi(host, 5);
    const { jobId } = await core.call('inventory.take', { name: 'spoofed' });
    await until(slow.started, 20_000, 'the inventory to reach npu-smi');
    await host.rotateHostKey(); // a reinstalled host, or someone in the middle
    const cut = await core.jobs.wait(jobId);
    expect(cut.status).toBe('failed');
    slowNpuSmi(host, 0);
    const { jobId: retry } = await core.call('inventory.take', { name: 'spoofed' });
    const refused = await core.jobs.wait(retry);
    expect(refused.status).toBe('failed');
    expect(refused.error?.code).toBe('HOST_KEY_MISMATCH');
    expect(refused.error?.message).toContain(oldFp);
    expect(refused.error?.message).toContain(host.hostKeyFingerprint);
    const test = await core.call('hosts.test', { name: 'spoofed' });
    expect(test).toMatchObject({ ok: false, error: { code: 'HOST_KEY_MISMATCH' } });
  }, 90_000);
});

d('fault: packet loss and a slow link (network namespace)', () => {
  it('netem is not in this kernel; nftables drops 10% of packets and tbf limits the rate instead', async () => {
    const net = createSimNetwork();
    cleanups.push(() => net.destroy());
    const host = await sim('lossy', { network: net });
    const core = newCore();
    await registerSimHost(core, host);
    const inner = sh('ip', ['-n', net.ns, '-o', 'link', 'show', 'type', 'veth'])
      .split(':')[1]!
      .trim()
      .split('@')[0]!;
    let netem = true;
    try {
      sh('ip', [
        'netns',
        'exec',
        net.ns,
        'tc',
        'qdisc',
        'add',
        'dev',
        inner,
        'root',
        'netem',
        'delay',
        '100ms',
      ]);
    } catch {
      netem = false;
    }
    console.log(
      `tc netem ${netem ? 'available: 100 ms delay added' : 'not available on this kernel'}`,
    );
    if (!netem)
      sh('ip', [
        'netns',
        'exec',
        net.ns,
        'tc',
        'qdisc',
        'add',
        'dev',
        inner,
        'root',
        'tbf',
        'rate',
        '512kbit',
        'burst',
        '16kbit',
        'latency',
        '500ms',
      ]);
    const nft = (...args: string[]) => sh('ip', ['netns', 'exec', net.ns, 'nft', ...args]);
    nft('add', 'table', 'inet', 'fault');
    nft('add', 'chain', 'inet', 'fault', 'in', '{ type filter hook input priority 0; }');
    nft(
      'add',
      'rule',
      'inet',
      'fault',
      'in',
      'tcp',
      'dport',
      '22',
      'numgen',
      'random',
      'mod',
      '100',
      '<',
      '10',
      'drop',
    );

    const t0 = Date.now();
    const { jobId } = await core.call('inventory.take', { name: 'lossy' });
    const job = await core.jobs.wait(jobId);
    console.log(`inventory over a lossy, slow link: ${job.status} in ${Date.now() - t0} ms`);
    expect(job.status).toBe('succeeded');

    // the link goes dark: a typed, explained failure, not a hang
    nft('flush', 'chain', 'inet', 'fault', 'in');
    nft('add', 'rule', 'inet', 'fault', 'in', 'tcp', 'dport', '22', 'drop');
    const dark = await core.call('hosts.test', { name: 'lossy' });
    expect(dark.ok).toBe(false);
    expect(dark.error?.code).toMatch(/^(CONNECT_TIMEOUT|DISCONNECTED|COMMAND_TIMEOUT)$/);
    // and back: the same call succeeds
    nft('flush', 'chain', 'inet', 'fault', 'in');
    expect((await core.call('hosts.test', { name: 'lossy' })).ok).toBe(true);
  }, 180_000);
});
