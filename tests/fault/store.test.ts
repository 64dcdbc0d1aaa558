/**
 * Faults of the local store: a full data disk (a small tmpfs in a mount namespace of its own),
 * kill -9 of the CLI and of `amw serve` in the middle of writes. WAL recovery must keep every
 * committed row, and no run cut off by the kill may read as finished.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { createCore } from '../../electron/core/api/core';
import { appRoot } from '../../electron/core/paths';
import {
  registerSimHost,
  simHostsSupported,
  startSimHost,
  type SimHost,
} from '../../e2e/hosts/sim-host';
import { slowNpuSmi, until } from './support';

const root = appRoot();
const amwBin = join(root, 'bin', 'amw.js');
const dirs: string[] = [];
const tmp = (p: string) => {
  const d = mkdtempSync(join(tmpdir(), p));
  dirs.push(d);
  return d;
};
const sims: SimHost[] = [];
afterAll(async () => {
  for (const s of sims) await s.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const root0 = process.getuid?.() === 0;

describe.skipIf(!root0)('fault: the data disk is full', () => {
  it('writes fail with "the disk is full" (not "Unexpected error"), and work again once there is space', () => {
    const mnt = tmp('amw-full-mnt-');
    const out = tmp('amw-full-out-');
    const script = `
set -u
mount -t tmpfs -o size=4m tmpfs "${mnt}"
export AMW_HOME="${mnt}/home" LANG=en_US.UTF-8
run() { name=$1; shift; "${process.execPath}" "${amwBin}" "$@" >"${out}/$name.out" 2>"${out}/$name.err"; echo $? >"${out}/$name.rc"; }
run info1 info
run add1 hosts add npu-a --host 10.0.0.1
dd if=/dev/zero of="${mnt}/ballast" bs=16k 2>/dev/null
run add2 hosts add npu-b --host 10.0.0.2
run info2 info
rm -f "${mnt}/ballast"
run add3 hosts add npu-b --host 10.0.0.2
run list hosts list
run check db check
`;
    execFileSync('unshare', ['-m', '--propagation', 'private', 'sh', '-c', script], {
      stdio: 'ignore',
    });
    const r = (n: string) => ({
      rc: Number(readFileSync(join(out, `${n}.rc`), 'utf8')),
      out: readFileSync(join(out, `${n}.out`), 'utf8'),
      err: readFileSync(join(out, `${n}.err`), 'utf8'),
    });
    expect(r('info1').rc).toBe(0);
    expect(r('add1').rc).toBe(0);
    for (const n of ['add2', 'info2']) {
      const x = r(n);
      if (x.rc !== 0) {
        expect(x.rc, n).toBe(2);
        expect(x.err, n).toMatch(/The disk is full/);
        expect(x.err, n).not.toMatch(/Unexpected error/);
      }
    }
    console.log(
      `full disk: hosts add → ${r('add2').err.trim()}\n           info → exit ${r('info2').rc} ${r('info2').err.trim()}`,
    );
    expect(r('add2').rc).toBe(2); // the write itself cannot succeed on a full disk
    expect(r('add3').rc).toBe(0); // retry once there is room
    expect(r('list').out).toMatch(/npu-a[\s\S]*npu-b/);
    expect(r('check').rc).toBe(0); // nothing was damaged by the failed writes
    // the tmpfs lived only in that mount namespace
    expect(existsSync(join(mnt, 'home'))).toBe(false);
  }, 120_000);
});

/** The first line `amw serve` prints, and its process. */
async function serve(home: string) {
  const child = spawn(process.execPath, [amwBin, 'serve', '--port', '0'], {
    env: { ...process.env, AMW_HOME: home, LANG: 'en_US.UTF-8' },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const url = await new Promise<URL>((resolve, reject) => {
    let buf = '';
    child.stdout!.on('data', (d: Buffer) => {
      buf += String(d);
      if (buf.includes('\n')) resolve(new URL(buf.split('\n')[0]!));
    });
    child.once('exit', (c) => reject(new Error(`serve exited ${c}`)));
  });
  return { child, url };
}

function rpc(port: string, token: string) {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/rpc?token=${token}`, {
    headers: { Origin: `http://127.0.0.1:${port}` },
  });
  let id = 0;
  const waiting = new Map<number, (v: { ok: boolean; value?: unknown; error?: unknown }) => void>();
  ws.on('message', (d) => {
    const m = JSON.parse(String(d)) as { id?: number; ok: boolean };
    if (typeof m.id === 'number') waiting.get(m.id)?.(m);
  });
  const opened = new Promise<void>((r, j) => {
    ws.once('open', () => r());
    ws.once('error', j);
  });
  return {
    opened,
    call: (method: string, input: unknown) =>
      new Promise<{ ok: boolean; value?: unknown; error?: unknown }>((resolve) => {
        const my = ++id;
        waiting.set(my, resolve);
        ws.send(JSON.stringify({ id: my, method, input }));
      }),
    close: () => ws.terminate(),
  };
}

const simOk = simHostsSupported().ok;

describe.skipIf(!simOk)('fault: kill -9 during writes', () => {
  it('`amw serve` killed mid-writes: every acknowledged row survives, the running stage reads as interrupted', async () => {
    const home = tmp('amw-kill-serve-');
    const sim = await startSimHost('kill-serve', 'ascend-910b');
    sims.push(sim);
    // the host is registered and its key trusted before serve starts
    const pre = createCore({
      env: { AMW_HOME: home } as NodeJS.ProcessEnv,
      hostKeyPolicy: 'accept-new',
      userKnownHosts: [],
    });
    await registerSimHost(pre, sim);
    expect((await pre.call('hosts.test', { name: 'kill-serve' })).ok).toBe(true);
    await pre.close();

    const { child, url } = await serve(home);
    const token = url.searchParams.get('token')!;
    const c = rpc(url.port, token);
    await c.opened;
    const slow = slowNpuSmi(sim, 30);
    const started = await c.call('stages.run', { host: 'kill-serve', stage: 'env' });
    expect(started.ok).toBe(true);
    await until(slow.started, 20_000, 'the stage to reach npu-smi');
    // a stream of writes; every acknowledged one is committed
    const acked: string[] = [];
    let stop = false;
    const writer = (async () => {
      for (let i = 0; !stop; i++) {
        const name = `w-${i}`;
        const r = await Promise.race([
          c.call('hosts.add', { name, hostname: `10.9.${i >> 8}.${i & 255}`, port: 22 }),
          new Promise<null>((res) => child.once('exit', () => res(null))),
        ]);
        if (!r) return;
        if (r.ok) acked.push(name);
      }
    })();
    await until(() => acked.length >= 40, 20_000, '40 acknowledged writes');
    child.kill('SIGKILL');
    stop = true;
    await new Promise((r) => child.once('exit', r));
    await writer;
    c.close();
    slowNpuSmi(sim, 0);

    const core = createCore({ env: { AMW_HOME: home } as NodeJS.ProcessEnv });
    try {
      const names = new Set((await core.call('hosts.list', {})).map((h) => h.name));
      const lost = acked.filter((n) => !names.has(n));
      expect(lost, 'acknowledged rows lost').toEqual([]);
      const sessions = await core.call('sessions.list', {});
      const s = await core.call('sessions.get', { id: sessions[0]!.id });
      expect(s.runs.map((r) => r.status)).toEqual(['interrupted']);
      const jobs = await core.call('jobs.list', {});
      expect(jobs.find((j) => j.kind.startsWith('stage'))?.status).toBe('interrupted');
      const { jobId } = await core.call('maintenance.check', {});
      expect((await core.jobs.wait(jobId)).result).toMatchObject({ ok: true });
      // and the run can be retried in the same session
      const again = await core.call('stages.run', {
        host: 'kill-serve',
        stage: 'env',
        sessionId: s.id,
      });
      expect((await core.jobs.wait(again.jobId)).status).toBe('succeeded');
    } finally {
      await core.close();
    }
  }, 120_000);

  it('the CLI killed mid-stage and mid-import: the run reads as interrupted, the store is whole', async () => {
    const home = tmp('amw-kill-cli-');
    const sim = await startSimHost('kill-cli', 'ascend-910b');
    sims.push(sim);
    const env = { ...process.env, AMW_HOME: home, LANG: 'en_US.UTF-8' };
    const pre = createCore({
      env: { AMW_HOME: home } as NodeJS.ProcessEnv,
      hostKeyPolicy: 'accept-new',
      userKnownHosts: [],
    });
    await registerSimHost(pre, sim);
    expect((await pre.call('hosts.test', { name: 'kill-cli' })).ok).toBe(true);
    await pre.close();

    const slow = slowNpuSmi(sim, 30);
    const run = spawn(process.execPath, [amwBin, 'run', 'kill-cli', '--stage', 'env', '--json'], {
      env,
      stdio: 'ignore',
    });
    await until(slow.started, 20_000, 'the CLI stage to reach npu-smi');
    run.kill('SIGKILL');
    await new Promise((r) => run.once('exit', r));
    slowNpuSmi(sim, 0);

    // an import of many hosts, killed while it writes
    const cfg = join(tmp('amw-kill-cfg-'), 'config');
    writeFileSync(
      cfg,
      Array.from(
        { length: 6000 },
        (_, i) => `Host bulk-${i}\n  HostName 10.8.${i >> 8}.${i & 255}\n`,
      ).join(''),
    );
    const imp = spawn(process.execPath, [amwBin, 'hosts', 'import-ssh-config', cfg], {
      env,
      stdio: 'ignore',
    });
    const db = join(home, 'amw.db');
    await until(
      () => existsSync(`${db}-wal`) && readFileSync(`${db}-wal`).length > 200_000,
      30_000,
      'the import to write',
    );
    imp.kill('SIGKILL');
    await new Promise((r) => imp.once('exit', r));

    const out = execFileSync(process.execPath, [amwBin, 'jobs', '--json'], {
      env,
      encoding: 'utf8',
    });
    const jobs = JSON.parse(out) as { kind: string; status: string }[];
    expect(jobs.find((j) => j.kind.startsWith('stage'))?.status).toBe('interrupted');
    const check = execFileSync(process.execPath, [amwBin, 'db', 'check', '--json'], {
      env,
      encoding: 'utf8',
    });
    expect(JSON.parse(check)).toMatchObject({ ok: true });
    const hosts = JSON.parse(
      execFileSync(process.execPath, [amwBin, 'hosts', 'list', '--json'], {
        env,
        encoding: 'utf8',
        maxBuffer: 256 * 1024 * 1024,
      }),
    ) as { name: string; hostname: string }[];
    const bulk = hosts.filter((x) => x.name.startsWith('bulk-')).length;
    console.log(`import killed after ${bulk} of 6000 hosts were committed`);
    expect(bulk).toBeLessThan(6000); // it really was cut off mid-way
    // every imported row is whole (WAL recovery keeps whole transactions only)
    for (const h of hosts.filter((x) => x.name.startsWith('bulk-')))
      expect(h.hostname).toMatch(/^10\.8\./);
    // rerunning the import completes it
    execFileSync(process.execPath, [amwBin, 'hosts', 'import-ssh-config', cfg], {
      env,
      stdio: 'ignore',
    });
    const after = JSON.parse(
      execFileSync(process.execPath, [amwBin, 'hosts', 'list', '--json'], {
        env,
        encoding: 'utf8',
        maxBuffer: 256 * 1024 * 1024,
      }),
    ) as unknown[];
    expect(after).toHaveLength(6001);
  }, 180_000);
});
