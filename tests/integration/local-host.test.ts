// This CI machine as the built-in host `local`: the local transport's exec contract (quoting,
// stdin, caps, timeouts, cancellation that ends the whole process group, copies) and inventory
// through the same engine path as an SSH host. This machine has no NPU: the inventory says so
// (no npu-smi), exactly as it does for an SSH host without one.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCore, type Core } from '../../electron/core/api/core';
import {
  copyLocal,
  execLocal,
  LOCAL_HOST_NAME,
  localTransport,
  streamLocal,
} from '../../electron/core/local/local-exec';
import { remoteCommand } from '../../electron/core/ssh/quote';
import { ArtifactStore } from '../../electron/core/db/artifacts';
import { openStore } from '../../electron/core/db/open';
import { EventBus } from '../../electron/core/events';
import { HostKeyPrompts } from '../../electron/core/hosts/host-key-prompts';
import { HostService } from '../../electron/core/hosts/host-service';
import { HostRepository } from '../../electron/core/hosts/repository';
import { SecretStore } from '../../electron/core/hosts/secrets';
import {
  registerSimHost,
  simHostsSupported,
  startSimHost,
  type SimHost,
} from '../../e2e/hosts/sim-host';
import type { Inventory, JobRecord } from '../../shared/api';
import { amw } from '../support/cli';
import { tempDir } from '../support/temp';

/** Running, not just a zombie waiting for a reaper (containers' init may not reap promptly). */
const alive = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(' ')[2] !== 'Z';
  } catch {
    return false;
  }
};
const execFileSyncText = (command: string) =>
  execFileSync('sh', ['-c', command], { encoding: 'utf8' }).trim();
async function until(cond: () => boolean, ms = 5000) {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  return cond();
}

describe('local transport', () => {
  it('runs a command string built by the shared quoting function, literally', async () => {
    const hostile = `a'b "c" $(touch /tmp/amw-pwned) \`id\` ; * \n 雪`;
    const r = await execLocal(remoteCommand('printf', '%s', hostile));
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(hostile);
    expect(existsSync('/tmp/amw-pwned')).toBe(false);
  });

  it('feeds stdin, reports exit code and stderr, caps output per stream', async () => {
    const r = await execLocal('cat; echo oops >&2; exit 3', { stdin: 'probe script\n' });
    expect(r).toMatchObject({
      code: 3,
      stdout: 'probe script\n',
      stderr: 'oops\n',
      truncated: false,
    });
    const big = await execLocal('head -c 100000 /dev/zero', { maxBytes: 1000 });
    expect(big.stdout).toHaveLength(1000);
    expect(big.truncated).toBe(true);
  });

  it('a timeout stops the command and everything it started (its process group)', async () => {
    const dir = tempDir();
    const pidFile = join(dir, 'pid');
    const p = execLocal(`sleep 30 & echo $! > ${pidFile}; wait`, { timeoutMs: 500 });
    await expect(p).rejects.toMatchObject({ code: 'COMMAND_TIMEOUT' });
    const grandchild = Number(readFileSync(pidFile, 'utf8'));
    expect(await until(() => !alive(grandchild))).toBe(true);
  });

  it('an AbortSignal cancels it the same way', async () => {
    const dir = tempDir();
    const pidFile = join(dir, 'pid');
    const ac = new AbortController();
    const p = execLocal(`sleep 30 & echo $! > ${pidFile}; wait`, { signal: ac.signal });
    await until(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '');
    ac.abort();
    await expect(p).rejects.toMatchObject({ code: 'CANCELLED' });
    const grandchild = Number(readFileSync(pidFile, 'utf8'));
    expect(await until(() => !alive(grandchild))).toBe(true);
    const pre = new AbortController();
    pre.abort();
    await expect(execLocal('true', { signal: pre.signal })).rejects.toMatchObject({
      code: 'CANCELLED',
    });
  });

  it('streams output as it arrives; file transfer is a checksummed copy', async () => {
    const chunks: string[] = [];
    const end = await streamLocal('echo one; sleep 0.1; echo two', {
      onStdout: (c) => chunks.push(c.toString()),
    });
    expect(end.code).toBe(0);
    expect(chunks.join('')).toBe('one\ntwo\n');
    const dir = tempDir();
    writeFileSync(join(dir, 'a.txt'), 'weights');
    const t = await localTransport.put(join(dir, 'a.txt'), join(dir, 'sub', 'b.txt'));
    expect(t.bytes).toBe(7);
    expect(t.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(readFileSync(join(dir, 'sub', 'b.txt'), 'utf8')).toBe('weights');
    await expect(copyLocal(join(dir, 'missing'), join(dir, 'x'))).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
  });
});

/** Every object key path, arrays by their elements: the shape of a result, not its values. */
function shape(v: unknown, prefix = '', out = new Set<string>()): Set<string> {
  if (Array.isArray(v)) v.forEach((x) => shape(x, `${prefix}[]`, out));
  else if (v && typeof v === 'object')
    for (const [k, x] of Object.entries(v)) {
      out.add(`${prefix}.${k}`);
      // free-form maps (environment variables, files read): their keys are data
      if (k !== 'env' && k !== 'files') shape(x, `${prefix}.${k}`, out);
    }
  return out;
}

describe('this machine as the host `local`', () => {
  const sim = simHostsSupported();
  let plain: SimHost | undefined;
  beforeAll(async () => {
    if (sim.ok) plain = await startSimHost('plain-local-cmp', 'no-cann');
  }, 60_000);
  afterAll(async () => {
    await plain?.stop();
  });

  const newCore = (): Core =>
    createCore({
      env: { AMW_HOME: tempDir() } as NodeJS.ProcessEnv,
      hostKeyPolicy: 'refuse-new',
      userKnownHosts: [],
    });
  const inventory = async (core: Core, name: string): Promise<JobRecord> =>
    core.jobs.wait((await core.call('inventory.take', { name })).jobId);

  it('its row appears the first time it is named, and every host list hears of it', async () => {
    const core = newCore();
    try {
      const changed: string[] = [];
      core.on('hosts.changed', ({ name }) => void changed.push(name));
      expect(await core.call('hosts.list', {})).toEqual([]);
      await core.call('hosts.get', { name: LOCAL_HOST_NAME });
      expect(changed).toEqual([LOCAL_HOST_NAME]);
      expect((await core.call('hosts.list', {})).map((h) => h.name)).toEqual([LOCAL_HOST_NAME]);
      await core.call('hosts.get', { name: LOCAL_HOST_NAME });
      expect(changed).toEqual([LOCAL_HOST_NAME]); // once: it is there now
      // nothing hops through this machine: it is not an SSH server the workbench reaches
      await expect(
        core.call('hosts.add', { name: 'behind', hostname: '10.0.0.9', jump: LOCAL_HOST_NAME }),
      ).rejects.toMatchObject({
        code: 'VALIDATION',
        message: expect.stringContaining('not an SSH server'),
      });
      expect((await core.call('hosts.list', {})).map((h) => h.name)).toEqual([LOCAL_HOST_NAME]);
      // nor does it become another machine by an edit: its group and tags are all that change
      await expect(
        core.call('hosts.update', { name: LOCAL_HOST_NAME, patch: { name: 'box' } }),
      ).rejects.toMatchObject({
        code: 'VALIDATION',
        message: expect.stringContaining('this machine'),
      });
      await expect(
        core.call('hosts.update', { name: LOCAL_HOST_NAME, patch: { hostname: '10.0.0.2' } }),
      ).rejects.toMatchObject({ code: 'VALIDATION' });
      expect(
        (await core.call('hosts.update', { name: LOCAL_HOST_NAME, patch: { group: 'lab' } })).group,
      ).toBe('lab');
      // nor is it removed (it would come back at once, its inventories gone)
      await expect(core.call('hosts.remove', { name: LOCAL_HOST_NAME })).rejects.toMatchObject({
        code: 'VALIDATION',
        message: expect.stringContaining('cannot be removed'),
      });
      expect((await core.call('hosts.get', { name: LOCAL_HOST_NAME })).group).toBe('lab');
    } finally {
      await core.close();
    }
  });

  it('monitors this machine without SSH (the engine on the Ascend server itself), and says so when npu-smi is missing', async () => {
    const core = newCore();
    const path = process.env.PATH;
    const once = <T>(event: 'monitor.sample' | 'monitor.ended', n = 1) =>
      new Promise<T[]>((resolve) => {
        const got: T[] = [];
        const off = core.on(event, (p) => {
          got.push(p as T);
          if (got.length >= n) {
            off();
            resolve(got);
          }
        });
      });
    try {
      // no npu-smi here: the monitor ends with the reason
      process.env.PATH = '/usr/bin:/bin';
      const missing = once<{ error: { code: string; message: string } | null }>('monitor.ended');
      await core.call('monitor.start', { name: LOCAL_HOST_NAME, intervalSec: 1 });
      expect((await missing)[0]!.error).toMatchObject({
        code: 'NOT_FOUND',
        message: expect.stringContaining('no Ascend driver is installed'),
      });

      // a stand-in npu-smi (test double: no NPU on this machine) printing a real reading
      const bin = tempDir();
      const sample = join(__dirname, '..', 'fixtures', 'npu-smi', 'info-s2.txt');
      writeFileSync(join(bin, 'npu-smi'), `#!/bin/sh\ncat '${sample}'\n`, { mode: 0o755 });
      process.env.PATH = `${bin}:/usr/bin:/bin`;
      const samples = once<{ host: string; chips: { npu: number }[] }>('monitor.sample', 2);
      const { monitorId } = await core.call('monitor.start', {
        name: LOCAL_HOST_NAME,
        intervalSec: 1,
      });
      const [first] = await samples;
      expect(first!.host).toBe(LOCAL_HOST_NAME);
      expect(first!.chips.map((c) => c.npu)).toEqual([3, 6]);
      const ended = once<{ monitorId: string; error: unknown }>('monitor.ended');
      await core.call('monitor.stop', { monitorId });
      expect((await ended)[0]).toEqual({ monitorId, error: null });
      // the loop and its sleep are gone
      expect(await until(() => !execFileSyncText("pgrep -f '[a]mw-monitor' || true"))).toBe(true);
    } finally {
      process.env.PATH = path;
      await core.close();
    }
  });

  it('inventories with no SSH and no host key, stores the snapshot, and says there is no NPU', async () => {
    const core = newCore();
    try {
      // refuse-new host keys and no password: an SSH host could not be reached like this
      expect(await core.call('hosts.list', {})).toEqual([]);
      const test = await core.call('hosts.test', { name: LOCAL_HOST_NAME });
      expect(test).toMatchObject({ ok: true, host: 'local', error: null });
      expect(test.system).toMatch(/^Linux /);
      const job = await inventory(core, LOCAL_HOST_NAME);
      expect(job.status).toBe('succeeded');
      const inv = (job.result as { inventory: Inventory }).inventory;
      expect(inv.host).toBe('local');
      expect(inv.arch).toBe(process.arch === 'x64' ? 'x86_64' : inv.arch);
      expect(inv.memoryMB).toBeGreaterThan(0);
      expect(inv.versions.python).toMatch(/^3\./);
      // no NPU on this CI machine
      expect(inv.npu).toBeNull();
      expect(inv.versions.cann).toBeNull();
      const [h] = await core.call('hosts.list', {});
      expect(h).toMatchObject({ name: 'local', tags: ['this-machine'] });
      expect(await core.call('inventory.list', { name: 'local' })).toHaveLength(1);
      // the name is the built-in host's: an SSH host cannot take it
      await expect(
        core.call('hosts.add', { name: 'local', hostname: '10.0.0.1' }),
      ).rejects.toMatchObject({ code: 'CONFLICT' });
    } finally {
      await core.close();
    }
  });

  it.skipIf(!sim.ok)('gives the same result shape as an SSH host without an NPU', async () => {
    const core = createCore({
      env: { AMW_HOME: tempDir() } as NodeJS.ProcessEnv,
      hostKeyPolicy: 'accept-new',
      userKnownHosts: [],
    });
    try {
      await registerSimHost(core, plain!);
      const overSsh = (await inventory(core, plain!.name)).result as { inventory: Inventory };
      const local = (await inventory(core, LOCAL_HOST_NAME)).result as { inventory: Inventory };
      expect([...shape(local.inventory)].sort()).toEqual([...shape(overSsh.inventory)].sort());
      expect(Object.keys(local).sort()).toEqual(Object.keys(overSsh).sort());
    } finally {
      await core.close();
    }
  });

  it.skipIf(!sim.ok)(
    'the env stage runs on it with the same verdict shape as over SSH',
    async () => {
      const core = createCore({
        env: { AMW_HOME: tempDir() } as NodeJS.ProcessEnv,
        hostKeyPolicy: 'accept-new',
        userKnownHosts: [],
      });
      try {
        await registerSimHost(core, plain!);
        const run = async (host: string) => {
          const { jobId, stageRunId } = await core.call('stages.run', { host, stage: 'env' });
          const job = await core.jobs.wait(jobId);
          expect(job.status, JSON.stringify(job.error)).toBe('succeeded');
          return core
            .call('sessions.get', { id: (job.result as { sessionId: number }).sessionId })
            .then((session) => ({
              job: job.result as Record<string, unknown>,
              session,
              stageRunId,
            }));
        };
        const ssh = await run(plain!.name);
        const here = await run(LOCAL_HOST_NAME);
        expect(Object.keys(here.job).sort()).toEqual(Object.keys(ssh.job).sort());
        const ids = (r: Record<string, unknown>) =>
          (r.checks as { id: string; status: string }[]).map((c) => c.id);
        expect(ids(here.job)).toEqual(ids(ssh.job));
        // no NPU here either: the device checks do not pass
        const status = Object.fromEntries(
          (here.job.checks as { id: string; status: string }[]).map((c) => [c.id, c.status]),
        );
        expect(status['env.npu-health']).not.toBe('pass');
      } finally {
        await core.close();
      }
    },
  );

  it.skipIf(!sim.ok)(
    'HostService.transport: the same exec/stream/put/get on local and over SSH',
    async () => {
      const home = tempDir();
      const { db } = openStore(join(home, 'amw.db'));
      const bus = new EventBus();
      const repo = new HostRepository(db);
      const hosts = new HostService(
        repo,
        new HostKeyPrompts(bus, 'accept-new'),
        new ArtifactStore(db, home),
        bus,
        { knownHostsFile: join(home, 'known_hosts'), userKnownHostsFiles: [] },
        new SecretStore(db, null),
      );
      repo.add({
        name: plain!.name,
        hostname: plain!.host,
        port: plain!.port,
        username: plain!.user,
        identityFile: plain!.clientKey,
      });
      try {
        const hostile = `it's "$(id)" \`x\` 雪`;
        const src = join(home, 'weights.bin');
        writeFileSync(src, Buffer.from(Array.from({ length: 300_000 }, (_, i) => i % 251)));
        for (const name of [LOCAL_HOST_NAME, plain!.name]) {
          const tr = hosts.transport(name);
          expect(tr.kind).toBe(name === LOCAL_HOST_NAME ? 'local' : 'ssh');
          const r = await tr.exec(remoteCommand('printf', '%s', hostile));
          expect(r.stdout, name).toBe(hostile);
          const piped = await tr.exec('cat', { stdin: 'x\n' });
          expect(piped.stdout).toBe('x\n');
          const out: string[] = [];
          const end = await tr.stream('echo a; echo b >&2; exit 4', {
            onStdout: (c) => out.push(`o:${c.toString()}`),
            onStderr: (c) => out.push(`e:${c.toString()}`),
          });
          expect(end.code).toBe(4);
          expect(out.sort()).toEqual(['e:b\n', 'o:a\n']);
          await expect(tr.exec('sleep 10', { timeoutMs: 300 })).rejects.toMatchObject({
            code: 'COMMAND_TIMEOUT',
          });
          // relative host paths start in the home directory on both
          const remote = name === LOCAL_HOST_NAME ? join(home, 'up.bin') : 'amw-transfer-up.bin';
          const put = await tr.put(src, remote);
          const back = join(home, `back-${name}.bin`);
          const got = await tr.get(remote, back);
          expect(got.sha256).toBe(put.sha256);
          expect(readFileSync(back).equals(readFileSync(src))).toBe(true);
        }
      } finally {
        hosts.pool.closeAll();
        db.close();
      }
    },
  );

  it('amw inventory local prints this machine without any SSH option', async () => {
    const home = tempDir();
    const r = await amw(['inventory', 'local', '--json'], { AMW_HOME: home });
    expect(r.code).toBe(0);
    const inv = JSON.parse(r.stdout) as Inventory;
    expect(inv.host).toBe('local');
    expect(inv.npu).toBeNull();
    const text = await amw(['inventory', 'local'], { AMW_HOME: home });
    expect(text.stdout).toContain('npu-smi: not found');
  });
});
