import { chmodSync, copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCore, type Core } from '../../electron/core/api/core';
import type { HostKeyPolicy } from '../../electron/core/hosts/host-key-prompts';
import {
  createSimNetwork,
  registerSimHost,
  SIM_PASSWORD,
  simHostsSupported,
  startSimHost,
  type SimHost,
} from '../../e2e/hosts/sim-host';
import type { Inventory, JobRecord } from '../../shared/api';
import { explainError, translator } from '../../shared/i18n';
import { amw } from '../support/cli';
import { tempDir } from '../support/temp';

const support = simHostsSupported();
const d = support.ok ? describe : describe.skip;
if (!support.ok) console.log(`simulated-host tests skipped: ${support.reason}`);

const sims: Record<string, SimHost> = {};

beforeAll(async () => {
  if (!support.ok) return;
  const started = await Promise.all([
    startSimHost('npu-910b', 'ascend-910b'),
    startSimHost('npu-910b-old', 'ascend-910b-old'),
    startSimHost('npu-310p', 'ascend-310p-duo'),
    startSimHost('plain', 'no-cann'),
    startSimHost('busy', 'npu-busy'),
    startSimHost('rotating', 'ascend-910b'),
  ]);
  for (const s of started) sims[s.name] = s;
}, 60_000);

afterAll(async () => {
  await Promise.all(Object.values(sims).map((s) => s.stop()));
});

function newCore(policy: HostKeyPolicy, home = tempDir()): Core {
  return createCore({
    env: { AMW_HOME: home } as NodeJS.ProcessEnv,
    hostKeyPolicy: policy,
    userKnownHosts: [],
  });
}

function addSim(
  core: Core,
  sim: SimHost,
  extra: { group?: string; identityFile?: string | null } = {},
) {
  return registerSimHost(core, sim, extra);
}

async function inventory(core: Core, name: string): Promise<JobRecord> {
  const { jobId } = await core.call('inventory.take', { name });
  return core.jobs.wait(jobId);
}

d('host keys', () => {
  it('refuses an unknown key in refuse-new mode, naming its SHA256 fingerprint', async () => {
    const core = newCore('refuse-new');
    await addSim(core, sims['npu-910b']!);
    const r = await core.call('hosts.test', { name: 'npu-910b' });
    expect(r.ok).toBe(false);
    expect(r.error?.code).toBe('HOST_KEY_UNKNOWN');
    expect(r.error?.message).toContain(sims['npu-910b']!.hostKeyFingerprint);
    expect(r.error?.detail).toMatchObject({
      keyType: 'ssh-ed25519',
      fingerprint: sims['npu-910b']!.hostKeyFingerprint,
    });
    await core.close();
  });

  it('asks through a hostkey.prompt event; accepting stores it hashed, and it is not asked again', async () => {
    const home = tempDir();
    const core = newCore('prompt', home);
    await addSim(core, sims['npu-910b']!);
    const prompts: string[] = [];
    core.on('hostkey.prompt', ({ promptId, info }) => {
      prompts.push(info.fingerprint);
      void core.call('hosts.answerHostKey', { promptId, accept: true });
    });
    const first = await core.call('hosts.test', { name: 'npu-910b' });
    expect(first).toMatchObject({ ok: true, system: expect.stringMatching(/^Linux /) });
    expect(prompts).toEqual([sims['npu-910b']!.hostKeyFingerprint]);
    const file = readFileSync(join(home, 'known_hosts'), 'utf8');
    expect(file).toMatch(/^\|1\|\S+ ssh-ed25519 /);
    await core.close();
    const again = newCore('prompt', home);
    again.on('hostkey.prompt', () => prompts.push('asked again'));
    expect((await again.call('hosts.test', { name: 'npu-910b' })).ok).toBe(true);
    expect(prompts).toHaveLength(1);
    await again.close();
  });

  it('declining the prompt is HOST_KEY_UNKNOWN and stores nothing', async () => {
    const home = tempDir();
    const core = newCore('prompt', home);
    await addSim(core, sims['npu-310p']!);
    core.on(
      'hostkey.prompt',
      ({ promptId }) => void core.call('hosts.answerHostKey', { promptId, accept: false }),
    );
    const r = await core.call('hosts.test', { name: 'npu-310p' });
    expect(r.error?.code).toBe('HOST_KEY_UNKNOWN');
    await expect(
      core.call('hosts.answerHostKey', { promptId: 'stale', accept: true }),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await core.close();
  });

  it('a changed key is refused with both fingerprints and the line to remove; the file is untouched', async () => {
    const home = tempDir();
    const core = newCore('accept-new', home);
    const sim = sims.rotating!;
    await addSim(core, sim);
    expect((await core.call('hosts.test', { name: 'rotating' })).ok).toBe(true);
    await core.close();
    const stored = sim.hostKeyFingerprint;
    const before = readFileSync(join(home, 'known_hosts'));
    await sim.rotateHostKey();

    const again = newCore('accept-new', home); // even "accept new" never overrides a changed key
    const r = await again.call('hosts.test', { name: 'rotating' });
    expect(r.ok).toBe(false);
    expect(r.error?.code).toBe('HOST_KEY_MISMATCH');
    expect(r.error?.detail).toMatchObject({
      storedFingerprint: stored,
      offeredFingerprint: sim.hostKeyFingerprint,
      file: join(home, 'known_hosts'),
      line: 1,
    });
    expect(r.error?.message).toContain('ssh-keygen -R');
    // the warning reads wholly in Chinese, the command to run kept as it is
    const zh = explainError(translator('zh-CN'), r.error!, 'zh-CN');
    expect(zh).toMatch(/^主机密钥已变化：.*的主机密钥已变化。已保存：/);
    expect(zh).toContain(`ssh-keygen -R`);
    expect(zh).not.toMatch(/has CHANGED|Stored:/);
    expect(readFileSync(join(home, 'known_hosts')).equals(before)).toBe(true);
    await again.close();
  });
});

d('connection failures are classified', () => {
  it('auth failure lists the methods tried', async () => {
    const core = newCore('accept-new');
    const dir = tempDir();
    const stranger = join(dir, 'id_stranger');
    const { execFileSync } = await import('node:child_process');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', stranger]);
    await addSim(core, sims['npu-910b']!, { identityFile: stranger });
    const r = await core.call('hosts.test', { name: 'npu-910b' });
    expect(r.error?.code).toBe('AUTH_FAILED');
    expect(r.error?.detail).toMatchObject({ tried: [`key ${stranger}`] });
    await core.close();
  });

  it("another entry's live connection to the same user@host:port logs nobody in: each entry's keys are its own", async () => {
    const core = newCore('accept-new');
    const sim = sims['npu-910b']!;
    const stranger = join(tempDir(), 'id_stranger');
    const { execFileSync } = await import('node:child_process');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', stranger]);
    await addSim(core, sim);
    await core.call('hosts.add', {
      name: 'same-box',
      hostname: sim.host,
      port: sim.port,
      username: sim.user,
      identityFile: stranger,
    });
    // the good entry's connection stays open for a minute after its inventory
    expect((await inventory(core, 'npu-910b')).status).toBe('succeeded');
    const test = await core.call('hosts.test', { name: 'same-box' });
    expect(test.ok).toBe(false);
    expect(test.error?.code).toBe('AUTH_FAILED');
    const job = await inventory(core, 'same-box');
    expect(job.status).toBe('failed');
    expect(job.error?.code).toBe('AUTH_FAILED');
    // and a test is a fresh login: it still passes for the entry that can log in
    expect((await core.call('hosts.test', { name: 'npu-910b' })).ok).toBe(true);
    await core.close();
  });

  it('password login works and the password is stored nowhere', async () => {
    const home = tempDir();
    const core = newCore('accept-new', home);
    await addSim(core, sims['npu-910b']!, { identityFile: null });
    const r = await core.call('hosts.test', { name: 'npu-910b', password: SIM_PASSWORD });
    expect(r.ok).toBe(true);
    await core.close();
    const { execFileSync } = await import('node:child_process');
    const found = execFileSync('sh', ['-c', `grep -rl -- '${SIM_PASSWORD}' ${home} || true`], {
      encoding: 'utf8',
    });
    expect(found).toBe('');
  });

  it('a key readable by others is refused with the chmod to run', async () => {
    const core = newCore('accept-new');
    const loose = join(tempDir(), 'id_loose');
    copyFileSync(sims['npu-910b']!.clientKey, loose);
    chmodSync(loose, 0o644);
    await addSim(core, sims['npu-910b']!, { identityFile: loose });
    const r = await core.call('hosts.test', { name: 'npu-910b' });
    expect(r.error?.code).toBe('KEY_UNREADABLE');
    expect(r.error?.message).toContain(`chmod 600 ${loose}`);
    await core.close();
  });

  it('refused port and unknown name', async () => {
    const core = newCore('accept-new');
    await core.call('hosts.add', { name: 'closed', hostname: '127.0.0.1', port: 1, username: 'x' });
    await core.call('hosts.add', {
      name: 'nowhere',
      hostname: 'no-such-host.invalid',
      port: 22,
      username: 'x',
    });
    expect((await core.call('hosts.test', { name: 'closed' })).error?.code).toBe(
      'CONNECTION_REFUSED',
    );
    expect((await core.call('hosts.test', { name: 'nowhere' })).error?.code).toBe('DNS');
    await core.close();
  });
});

d('inventory', () => {
  it('8×910B: chips, versions, device nodes — stored as a snapshot with its raw evidence', async () => {
    const core = newCore('accept-new');
    await addSim(core, sims['npu-910b']!);
    const job = await inventory(core, 'npu-910b');
    expect(job.status).toBe('succeeded');
    const inv = (job.result as { inventory: Inventory }).inventory;
    expect(inv.npu?.smiVersion).toBe('25.0.rc1.1');
    expect(inv.npu?.devices).toHaveLength(8);
    expect(inv.npu?.devices.every((dv) => dv.name === '910B4' && dv.health === 'OK')).toBe(true);
    expect(inv.versions).toMatchObject({
      cann: '8.1.RC1',
      driver: '25.0.rc1.1',
      firmware: '7.7.0.1.231',
      torchNpu: '2.1.0.post12', // the simulated host's torch_npu stand-in
    });
    expect(inv.versions.python).toMatch(/^3\./);
    expect(inv.devices).toEqual(
      expect.arrayContaining([
        '/dev/davinci0',
        '/dev/davinci7',
        '/dev/davinci_manager',
        '/dev/devmm_svm',
        '/dev/hisi_hdc',
      ]),
    );
    expect(inv.env.ASCEND_TOOLKIT_HOME).toBe('/usr/local/Ascend/ascend-toolkit/latest');
    expect(inv.envSourcedByDefault).toBe(true); // its ~/.bashrc sources set_env.sh first
    expect(inv.setEnvPath).toBe('/usr/local/Ascend/ascend-toolkit/set_env.sh');
    expect(inv.memoryMB).toBeGreaterThan(0);
    const list = await core.call('hosts.list', {});
    expect(list[0]!.inventory).toMatchObject({
      chip: '910B4',
      chipCount: 8,
      health: 'OK',
      cann: '8.1.RC1',
    });
    await core.close();
  });

  it('a host without CANN or npu-smi is inventoried, with those facts absent', async () => {
    const core = newCore('accept-new');
    await addSim(core, sims.plain!);
    const job = await inventory(core, 'plain');
    expect(job.status).toBe('succeeded');
    const inv = (job.result as { inventory: Inventory }).inventory;
    expect(inv.npu).toBeNull();
    expect(inv.versions).toMatchObject({
      cann: null,
      driver: null,
      firmware: null,
      torchNpu: null,
    });
    expect(inv.devices).toEqual([]);
    expect(inv.setEnvPath).toBeNull();
    expect(inv.os).toBeTruthy();
    await core.close();
  });

  it('310P Duo: two chips on one card, no HBM; npu-smi failure is explained, not fatal', async () => {
    const core = newCore('accept-new');
    await addSim(core, sims['npu-310p']!);
    await addSim(core, sims.busy!);
    const duo = (await inventory(core, 'npu-310p')).result as { inventory: Inventory };
    expect(duo.inventory.npu?.devices.map((dv) => [dv.npu, dv.chip, dv.hbmTotalMB])).toEqual([
      [6, 0, null],
      [6, 1, null],
    ]);
    expect(duo.inventory.npu?.processes).toEqual([
      { npu: 6, chip: 1, pid: 293029, name: 'python3.11', memMB: 6612 },
    ]);
    const busy = await inventory(core, 'busy');
    expect(busy.status).toBe('succeeded');
    const inv = (busy.result as { inventory: Inventory }).inventory;
    expect(inv.npu?.error?.code).toBe(-8005);
    expect(inv.notes.join('\n')).toMatch(/-8005/);
    expect(inv.versions.cann).toBe('8.1.RC1');
    await core.close();
  });

  it('snapshots of two hosts diff by what the machines have', async () => {
    const core = newCore('accept-new');
    await addSim(core, sims['npu-910b']!);
    await addSim(core, sims['npu-910b-old']!);
    const a = ((await inventory(core, 'npu-910b')).result as { snapshotId: number }).snapshotId;
    const b = ((await inventory(core, 'npu-910b-old')).result as { snapshotId: number }).snapshotId;
    const rows = await core.call('inventory.diff', { a, b });
    const byPath = Object.fromEntries(rows.map((r) => [r.path, r]));
    expect(byPath['versions.cann']).toEqual({ path: 'versions.cann', a: '8.1.RC1', b: '8.0.0' });
    expect(byPath['npu.devices[0].name']).toEqual({
      path: 'npu.devices[0].name',
      a: '910B4',
      b: '910ProB',
    });
    expect(byPath.host).toBeUndefined();
    await core.close();
  });

  it('a cancelled inventory stores nothing and can be retried', async () => {
    const core = newCore('accept-new');
    await addSim(core, sims['npu-910b']!);
    const { jobId } = await core.call('inventory.take', { name: 'npu-910b' });
    core.jobs.cancel(jobId);
    expect((await core.jobs.wait(jobId)).status).toBe('cancelled');
    expect(await core.call('inventory.list', { name: 'npu-910b' })).toEqual([]);
    expect((await inventory(core, 'npu-910b')).status).toBe('succeeded');
    expect(await core.call('inventory.list', { name: 'npu-910b' })).toHaveLength(1);
    await core.close();
  });
});

d('fleet', () => {
  it('inventories a group with per-host progress and flags where hosts disagree', async () => {
    const core = newCore('accept-new');
    for (const name of ['npu-910b', 'rotating', 'npu-910b-old'])
      await addSim(core, sims[name]!, { group: 'cluster-a' });
    await addSim(core, sims.plain!, { group: 'cluster-a' });
    const progress: string[] = [];
    core.on('job.updated', (j) => {
      if (j.kind === 'fleet.inventory' && j.message) progress.push(String(j.message.params?.host));
    });
    const { jobId } = await core.call('fleet.inventory', { group: 'cluster-a' });
    const job = await core.jobs.wait(jobId);
    expect(job.status).toBe('succeeded');
    const results = job.result as { host: string; ok: boolean }[];
    expect(results.map((r) => [r.host, r.ok])).toEqual([
      ['npu-910b', true],
      ['npu-910b-old', true],
      ['plain', true],
      ['rotating', true],
    ]);
    expect(progress.length).toBeGreaterThan(0);
    const table = await core.call('fleet.table', { group: 'cluster-a' });
    const differs = Object.fromEntries(table.map((r) => [r.host.name, r.differs]));
    expect(differs['npu-910b']).toEqual([]);
    expect(differs['npu-910b-old']).toEqual(
      expect.arrayContaining(['chip', 'cann', 'driver', 'firmware']),
    );
    expect(differs.plain).toEqual(expect.arrayContaining(['chipCount', 'cann', 'driver']));
    await core.close();
  });
});

d('CLI against simulated hosts', () => {
  it('hosts add → test without the flag exits 2 with the fingerprint → inventory --json with it', async () => {
    const db = join(tempDir(), 'amw.db');
    const sim = sims['npu-310p']!;
    const env = { AMW_DB: db };
    const add = await amw(
      [
        'hosts',
        'add',
        'duo',
        '--host',
        sim.host,
        '--port',
        String(sim.port),
        '--user',
        sim.user,
        '--identity',
        sim.clientKey,
      ],
      env,
    );
    expect(add.code).toBe(0);
    const test = await amw(['hosts', 'test', 'duo'], env);
    expect(test.code).toBe(2);
    expect(test.stderr).toContain(sim.hostKeyFingerprint);
    const inv = await amw(['inventory', 'duo', '--json', '--accept-new-host-key'], env);
    expect(inv.code).toBe(0);
    const out = JSON.parse(inv.stdout) as Inventory;
    expect(out).toMatchObject({ host: 'duo', versions: { cann: '8.1.RC1' } });
    expect(out.npu?.devices).toHaveLength(2);
    const list = await amw(['hosts', 'list'], env);
    expect(list.stdout).toMatch(/duo .* 2× 310P3 OK/);
  });

  it('--password-stdin logs in with a password read from stdin', async () => {
    const db = join(tempDir(), 'amw.db');
    const sim = sims['npu-910b']!;
    const env = { AMW_DB: db };
    await amw(
      ['hosts', 'add', 'pw', '--host', sim.host, '--port', String(sim.port), '--user', sim.user],
      env,
    );
    const r = await amw(
      ['hosts', 'test', 'pw', '--password-stdin', '--accept-new-host-key'],
      { ...env, HOME: tempDir() },
      `${SIM_PASSWORD}\n`,
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });
});

d('ssh_config import', () => {
  it('imports hosts through Include with ProxyJump, and skips patterns', async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, 'extra.conf'),
      'Host npu-2\n  HostName 10.9.0.2\n  ProxyJump bastion\n',
    );
    writeFileSync(
      join(dir, 'config'),
      `Include ${dir}/*.conf\nHost bastion\n  HostName jump.example\n  User ops\n  Port 2222\nHost npu-*\n  User ascend\n  IdentityFile ~/.ssh/id_npu\nHost npu-1\n  HostName 10.9.0.1\n  ProxyJump ops@other.example:2200\n`,
    );
    const core = newCore('accept-new');
    const r = await core.call('hosts.importSshConfig', { file: join(dir, 'config') });
    expect(r.added.sort()).toEqual(['bastion', 'npu-1', 'npu-2', 'other.example']);
    const hosts = Object.fromEntries((await core.call('hosts.list', {})).map((h) => [h.name, h]));
    expect(hosts['npu-2']).toMatchObject({
      hostname: '10.9.0.2',
      username: 'ascend',
      identityFile: '~/.ssh/id_npu',
      jump: 'bastion',
      source: 'ssh_config',
    });
    expect(hosts.bastion).toMatchObject({ hostname: 'jump.example', port: 2222, username: 'ops' });
    expect(hosts['npu-1']).toMatchObject({ jump: 'other.example' });
    expect(hosts['other.example']).toMatchObject({ port: 2200, username: 'ops' });
    // importing again updates, it does not duplicate
    const again = await core.call('hosts.importSshConfig', { file: join(dir, 'config') });
    expect(again.added).toEqual([]);
    expect(again.updated).toHaveLength(4);
    await core.close();
  });
});

d('jump hosts', () => {
  it('reaches a host that only a jump host can see, verifying both keys; a broken hop is explained', async () => {
    const net = createSimNetwork();
    const started: SimHost[] = [];
    try {
      const bastion = await startSimHost('bastion', 'no-cann', {
        network: net,
        listen: net.nsAddress,
      });
      started.push(bastion);
      const inner = await startSimHost('inner', 'ascend-910b', {
        network: net,
        listen: '127.0.0.1',
        port: 2222,
      });
      started.push(inner);
      const home = tempDir();
      const core = newCore('prompt', home);
      const asked: string[] = [];
      core.on('hostkey.prompt', ({ promptId, info }) => {
        asked.push(`${info.name} ${info.fingerprint}`);
        void core.call('hosts.answerHostKey', { promptId, accept: true });
      });
      await addSim(core, bastion);
      await core.call('hosts.add', {
        name: 'inner',
        hostname: '127.0.0.1',
        port: 2222,
        username: inner.user,
        identityFile: inner.clientKey,
        jump: 'bastion',
      });
      // directly, 127.0.0.1:2222 is this machine's own loopback: nothing there
      await core.call('hosts.add', {
        name: 'inner-direct',
        hostname: '127.0.0.1',
        port: 2222,
        username: inner.user,
        identityFile: inner.clientKey,
      });
      expect((await core.call('hosts.test', { name: 'inner-direct' })).error?.code).toBe(
        'CONNECTION_REFUSED',
      );

      const r = await core.call('hosts.test', { name: 'inner' });
      expect(r).toMatchObject({ ok: true });
      expect(asked).toEqual([
        `bastion ${bastion.hostKeyFingerprint}`,
        `inner ${inner.hostKeyFingerprint}`,
      ]);
      const job = await inventory(core, 'inner');
      expect((job.result as { inventory: Inventory }).inventory.npu?.devices).toHaveLength(8);

      await core.call('hosts.update', { name: 'inner', patch: { port: 2299 } });
      const broken = await core.call('hosts.test', { name: 'inner' });
      expect(broken.error?.code).toBe('JUMP_FAILED');
      expect(broken.error?.message).toMatch(
        /bastion could not open a connection to 127\.0\.0\.1:2299/,
      );
      await core.close();
    } finally {
      await Promise.all(started.map((h) => h.stop()));
      net.destroy();
    }
  });
});

d('live monitor and terminal', () => {
  const until = <T>(core: Core, event: Parameters<Core['on']>[0], pred: (p: T) => boolean) =>
    new Promise<T>((resolve) => {
      const off = core.on(event, (p) => {
        if (pred(p as T)) {
          off();
          resolve(p as T);
        }
      });
    });

  it('streams npu-smi samples over one channel and leaves nothing running when stopped', async () => {
    const core = newCore('accept-new');
    await addSim(core, sims['npu-910b']!);
    const samples: { chips: unknown[] }[] = [];
    core.on('monitor.sample', (s) => samples.push(s));
    const { monitorId } = await core.call('monitor.start', { name: 'npu-910b', intervalSec: 1 });
    await until(core, 'monitor.sample', () => samples.length >= 2);
    expect(samples[0]!.chips).toHaveLength(8);
    expect(samples[1]!.chips[3]).toMatchObject({ npu: 3, hbmTotalMB: 32768, health: 'OK' });
    const ended = until<{ monitorId: string; error: unknown }>(
      core,
      'monitor.ended',
      (e) => e.monitorId === monitorId,
    );
    await core.call('monitor.stop', { monitorId });
    expect((await ended).error).toBeNull();
    const { execFileSync } = await import('node:child_process');
    // the remote loop is gone: no `amw-monitor` process of the user is left
    let left = '1';
    for (let i = 0; i < 40 && left !== ''; i++) {
      left = execFileSync('sh', ['-c', 'pgrep -u amw-sim -f amw-monitor || true'], {
        encoding: 'utf8',
      }).trim();
      if (left) await new Promise((r) => setTimeout(r, 50));
    }
    expect(left).toBe('');
    await core.close();
  });

  it('a host without npu-smi ends the monitor with an explanation', async () => {
    const core = newCore('accept-new');
    await addSim(core, sims.plain!);
    const ended = until<{ error: { code: string; message: string } | null }>(
      core,
      'monitor.ended',
      () => true,
    );
    await core.call('monitor.start', { name: 'plain', intervalSec: 1 });
    const e = await ended;
    expect(e.error).toMatchObject({
      code: 'NOT_FOUND',
      message: expect.stringContaining('no Ascend driver is installed'),
    });
    await core.close();
  });

  it('an interactive shell: input, output, resize, exit', async () => {
    const core = newCore('accept-new');
    await addSim(core, sims['npu-910b']!);
    let out = '';
    core.on('terminal.data', (d) => (out += d.data));
    const { terminalId } = await core.call('terminal.open', {
      name: 'npu-910b',
      cols: 80,
      rows: 24,
    });
    await core.call('terminal.input', { terminalId, data: 'echo result=$((6*7)); stty size\n' });
    const deadline = Date.now() + 10_000;
    while (!(/result=42/.test(out) && /24 80/.test(out)) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(out).toMatch(/result=42/);
    expect(out).toMatch(/24 80/);
    await core.call('terminal.resize', { terminalId, cols: 120, rows: 40 });
    await core.call('terminal.input', { terminalId, data: 'stty size\n' });
    while (!/40 120/.test(out) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(out).toMatch(/40 120/);
    const exited = until<{ terminalId: string; code: number | null }>(
      core,
      'terminal.exit',
      (e) => e.terminalId === terminalId,
    );
    await core.call('terminal.input', { terminalId, data: 'exit 3\n' });
    expect((await exited).code).toBe(3);
    await expect(core.call('terminal.input', { terminalId, data: 'x' })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    await core.close();
  });
});

d('dropped connections', () => {
  it('a host going away mid-command is DISCONNECTED; nothing half-stored; a retry works once it is back', async () => {
    const sim = await startSimHost('dropper', 'ascend-910b');
    try {
      const core = newCore('accept-new');
      await addSim(core, sim);
      expect((await inventory(core, 'dropper')).status).toBe('succeeded');
      const ended = new Promise<{ error: { code: string } | null }>((resolve) =>
        core.on('monitor.ended', resolve),
      );
      await core.call('monitor.start', { name: 'dropper', intervalSec: 5 });
      await sim.rotateHostKey(); // stops every process of the host, then starts it again
      expect((await ended).error?.code).toBe('DISCONNECTED');
      // the restarted host has a new key: refused, and the snapshot from before is intact
      const after = await core.call('hosts.test', { name: 'dropper' });
      expect(after.error?.code).toBe('HOST_KEY_MISMATCH');
      expect(await core.call('inventory.list', { name: 'dropper' })).toHaveLength(1);
      await core.close();
    } finally {
      await sim.stop();
    }
  });
});

d('remembered passwords', () => {
  /**
   * Test double for Electron's safeStorage, which cannot run without the Electron runtime: it
   * encrypts with a random AES key, as the OS keychain would with its own.
   */
  async function fakeSafeStorage() {
    const { createCipheriv, createDecipheriv, randomBytes } = await import('node:crypto');
    const key = randomBytes(32);
    return {
      encrypt(plain: string) {
        const iv = randomBytes(12);
        const c = createCipheriv('aes-256-gcm', key, iv);
        const body = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
        return Buffer.concat([iv, c.getAuthTag(), body]);
      },
      decrypt(buf: Buffer) {
        const d2 = createDecipheriv('aes-256-gcm', key, buf.subarray(0, 12));
        d2.setAuthTag(buf.subarray(12, 28));
        return Buffer.concat([d2.update(buf.subarray(28)), d2.final()]).toString('utf8');
      },
    };
  }

  it('the desktop app remembers a password only encrypted, and logs in with it', async () => {
    const home = tempDir();
    const core = createCore({
      env: { AMW_HOME: home } as NodeJS.ProcessEnv,
      hostKeyPolicy: 'accept-new',
      userKnownHosts: [],
      secretCipher: await fakeSafeStorage(),
    });
    expect((await core.call('app.info', {})).canRememberSecrets).toBe(true);
    await addSim(core, sims['npu-910b']!, { identityFile: null });
    expect((await core.call('hosts.test', { name: 'npu-910b' })).error?.code).toBe('AUTH_FAILED');
    await core.call('hosts.rememberPassword', { name: 'npu-910b', password: SIM_PASSWORD });
    expect((await core.call('hosts.get', { name: 'npu-910b' })).savedSecret).toBe(true);
    expect((await core.call('hosts.test', { name: 'npu-910b' })).ok).toBe(true);
    await core.close();
    const { execFileSync } = await import('node:child_process');
    expect(
      execFileSync('sh', ['-c', `grep -rl -- '${SIM_PASSWORD}' ${home} || true`], {
        encoding: 'utf8',
      }),
    ).toBe('');
  });

  it('serve mode and the CLI refuse to remember', async () => {
    const core = newCore('accept-new');
    expect((await core.call('app.info', {})).canRememberSecrets).toBe(false);
    await addSim(core, sims['npu-910b']!);
    await expect(
      core.call('hosts.rememberPassword', { name: 'npu-910b', password: 'x' }),
    ).rejects.toMatchObject({ code: 'VALIDATION' });
    await core.close();
  });
});

d('encrypted keys', () => {
  it('the UI is asked for the passphrase through secret.prompt; the CLI policy is told to use ssh-agent', async () => {
    const { execFileSync } = await import('node:child_process');
    const dir = tempDir();
    const locked = join(dir, 'id_locked');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', 'open sesame', '-f', locked]);
    const sim = sims['npu-910b']!;
    writeFileSync(
      join(sim.dir, 'authorized_keys'),
      `${readFileSync(`${sim.clientKey}.pub`, 'utf8')}${readFileSync(`${locked}.pub`, 'utf8')}`,
    );
    const ui = newCore('accept-new');
    await addSim(ui, sim, { identityFile: locked });
    // accept-new never prompts: the key cannot be unlocked and the message says what to do
    const cli = await ui.call('hosts.test', { name: 'npu-910b' });
    expect(cli.error).toMatchObject({
      code: 'KEY_UNREADABLE',
      message: expect.stringContaining('ssh-add'),
    });
    await ui.close();

    const app = newCore('prompt');
    await addSim(app, sim, { identityFile: locked });
    app.on(
      'hostkey.prompt',
      ({ promptId }) => void app.call('hosts.answerHostKey', { promptId, accept: true }),
    );
    const asked: string[] = [];
    app.on('secret.prompt', ({ promptId, file }) => {
      asked.push(file);
      void app.call('hosts.answerSecret', { promptId, secret: 'open sesame' });
    });
    expect((await app.call('hosts.test', { name: 'npu-910b' })).ok).toBe(true);
    expect(asked).toEqual([locked]);
    await app.close();
  });
});
