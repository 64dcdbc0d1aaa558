import { en, zh } from '../support/text';
import { chownSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCore, type Core } from '../../electron/core/api/core';
import {
  registerSimHost,
  simHostsSupported,
  startSimHost,
  type SimHost,
} from '../../e2e/hosts/sim-host';
import type { ProfileName } from '../../e2e/hosts/profiles';
import type { CheckOutcome, StageRunRecord } from '../../shared/api';
import { amw } from '../support/cli';
import { tempDir } from '../support/temp';

const support = simHostsSupported();
const d = support.ok ? describe : describe.skip;

const HOSTS: [string, ProfileName][] = [
  ['healthy', 'ascend-910b'],
  ['mismatch', 'torch-npu-mismatch'],
  ['unsourced', 'set-env-not-sourced'],
  ['alarm', 'chip-alarm'],
  ['bare', 'no-cann'],
];

const sims: Record<string, SimHost> = {};
const runs: Record<string, StageRunRecord> = {};
let core: Core;
let home: string;

async function runEnv(c: Core, host: string, sessionId?: number): Promise<StageRunRecord> {
  const started = await c.call('stages.run', { host, stage: 'env', sessionId });
  const job = await c.jobs.wait(started.jobId);
  if (job.status !== 'succeeded') throw new Error(JSON.stringify(job.error));
  return job.result as StageRunRecord;
}

const check = (host: string, id: string): CheckOutcome => {
  const c = runs[host]!.checks.find((x) => x.id === id);
  if (!c) throw new Error(`no ${id} on ${host}`);
  return c;
};

d('environment stage on simulated hosts', () => {
  beforeAll(async () => {
    const started = await Promise.all(HOSTS.map(([name, profile]) => startSimHost(name, profile)));
    for (const s of started) sims[s.name] = s;
    // suite-wide: tempDir() would be removed after the first test
    home = mkdtempSync(join(tmpdir(), 'amw-env-'));
    core = createCore({
      env: { AMW_HOME: home } as NodeJS.ProcessEnv,
      hostKeyPolicy: 'accept-new',
      userKnownHosts: [],
    });
    for (const s of started) {
      await registerSimHost(core, s);
    }
    const results = await Promise.all(HOSTS.map(([name]) => runEnv(core, name)));
    for (const r of results) runs[r.host] = r;
  }, 180_000);

  afterAll(async () => {
    await core?.close();
    await Promise.all(Object.values(sims).map((s) => s.stop()));
    rmSync(home, { recursive: true, force: true });
  });

  it('runs every env check, in order, with both languages', () => {
    for (const [name] of HOSTS) {
      expect(runs[name]!.checks.map((c) => c.id)).toEqual([
        'env.version-matrix',
        'env.driver-cann',
        'env.set-env',
        'env.device-nodes',
        'env.npu-health',
        'env.visible-devices',
        'env.torch-npu-import',
        'env.npu-op-runs',
        'env.python-packages',
        'env.limits',
      ]);
      for (const c of runs[name]!.checks) {
        expect(en(c.summary), `${name} ${c.id}`).toBeTruthy();
        expect(zh(c.summary), `${name} ${c.id}`).toBeTruthy();
      }
    }
  });

  it('every check on every host gives the verdict that host deserves', () => {
    // prettier-ignore
    const expected: Record<string, string[]> = {
      //                        healthy  mismatch unsourced alarm   bare
      'env.version-matrix':    ['fail', 'fail',  'fail',   'fail', 'fail'],
      'env.driver-cann':       ['pass', 'pass',  'pass',   'pass', 'fail'],
      'env.set-env':           ['pass', 'pass',  'warn',   'pass', 'skip'],
      'env.device-nodes':      ['pass', 'pass',  'pass',   'pass', 'skip'],
      'env.npu-health':        ['pass', 'pass',  'pass',   'fail', 'skip'],
      'env.visible-devices':   ['pass', 'pass',  'pass',   'pass', 'pass'],
      'env.torch-npu-import':  ['pass', 'pass',  'pass',   'pass', 'fail'],
      'env.npu-op-runs':       ['pass', 'pass',  'pass',   'warn', 'skip'],
      'env.python-packages':   ['pass', 'pass',  'pass',   'pass', 'pass'],
      'env.limits':            ['warn', 'warn',  'warn',   'warn', 'warn'],
    };
    const actual = Object.fromEntries(
      Object.keys(expected).map((id) => [id, HOSTS.map(([name]) => check(name, id).status)]),
    );
    expect(actual).toEqual(expected);
  });

  it('healthy 910B: driver, env, devices, health, import and a computation pass', () => {
    for (const id of [
      'env.driver-cann',
      'env.set-env',
      'env.device-nodes',
      'env.npu-health',
      'env.visible-devices',
      'env.torch-npu-import',
      'env.npu-op-runs',
      'env.python-packages',
    ]) {
      expect(check('healthy', id).status, id).toBe('pass');
    }
    expect(en(check('healthy', 'env.torch-npu-import').summary)).toMatch(/8 × Ascend910B4/);
    // the simulated hosts carry Debian's real torch 1.13, for which no torch_npu exists: the
    // matrix check says exactly that
    const vm = check('healthy', 'env.version-matrix');
    expect(vm.status).toBe('fail');
    expect(en(vm.summary)).toMatch(
      /torch 1\.13\.\S+ does not match torch_npu 2\.1\.0\.post12 \(it needs torch 2\.1\.0\)/,
    );
    expect(check('healthy', 'env.limits').status).toBe('warn'); // 24 GB of memory on this machine
  });

  it('torch_npu built for another CANN: named, with the nearest valid combinations', () => {
    const vm = check('mismatch', 'env.version-matrix');
    expect(vm.status).toBe('fail');
    expect(en(vm.summary)).toContain(
      'torch_npu 2.5.1 is not built for CANN 8.5.0 (it pairs with CANN 8.1.RC1)',
    );
    expect(en(vm.remediation)).toMatch(
      /Nearest valid combinations: torch_npu 2\.9\.0 \+ torch 2\.9\.0 \+ CANN 8\.5\.0/,
    );
    expect(check('mismatch', 'env.driver-cann').status).toBe('pass');
  });

  it('set_env.sh sourced only for interactive shells: a warning with the line to add', () => {
    const c = check('unsourced', 'env.set-env');
    expect(c.status).toBe('warn');
    expect(en(c.summary)).toMatch(/only for interactive shells/);
    expect(en(c.remediation)).toContain('source /usr/local/Ascend/ascend-toolkit/set_env.sh');
    expect(check('healthy', 'env.set-env').status).toBe('pass');
  });

  it('a chip in Alarm fails health and names the process on another chip; a CPU fallback warns', () => {
    const h = check('alarm', 'env.npu-health');
    expect(h.status).toBe('fail');
    expect(en(h.summary)).toContain('NPU 2.0 Alarm');
    expect(en(h.summary)).toContain('pid 31337 python3 20480 MB');
    const op = check('alarm', 'env.npu-op-runs');
    expect(op.status).toBe('warn');
    expect(en(op.summary)).toContain('aten::nonzero');
  });

  it('no CANN at all: absent things are reported as absent, the probe itself does not fail', () => {
    expect(runs.bare!.status).toBe('fail');
    expect(en(check('bare', 'env.version-matrix').summary)).toBe('CANN is not installed.');
    expect(check('bare', 'env.driver-cann').status).toBe('fail');
    for (const id of ['env.set-env', 'env.device-nodes', 'env.npu-health'])
      expect(check('bare', id).status, id).toBe('skip');
    const imp = check('bare', 'env.torch-npu-import');
    expect(imp.status).toBe('fail');
    expect(en(imp.summary)).toMatch(/No module named 'torch_npu'/);
  });

  it('waiving every failure with a reason and a name lets the stage pass; the record shows who and why', async () => {
    const run = runs.mismatch!;
    expect(run.status).toBe('fail');
    await core.call('checks.waive', {
      sessionId: run.sessionId,
      checkId: 'env.version-matrix',
      host: 'mismatch',
      reason: 'Upgrading torch_npu next sprint',
      by: 'li.lei',
    });
    await expect(
      core.call('checks.waive', {
        sessionId: run.sessionId,
        checkId: 'env.version-matrix',
        host: 'mismatch',
        reason: '',
        by: 'x',
      }),
    ).rejects.toMatchObject({ code: 'VALIDATION' });
    const s = await core.call('sessions.get', { id: run.sessionId });
    const r = s.runs.find((x) => x.host === 'mismatch')!;
    expect(r.checks.find((c) => c.id === 'env.version-matrix')!.waiver).toMatchObject({
      reason: 'Upgrading torch_npu next sprint',
      by: 'li.lei',
    });
    expect(r.status).toBe('warn'); // limits still warns
    await core.call('checks.unwaive', {
      sessionId: run.sessionId,
      checkId: 'env.version-matrix',
      host: 'mismatch',
      by: 'li.lei',
    });
    expect((await core.call('sessions.get', { id: run.sessionId })).runs[0]!.status).toBe('fail');
  });

  it('history: two sessions compared check by check', async () => {
    const a = runs.unsourced!.sessionId;
    // the fix: source set_env.sh before the guard, then run again in a new session
    writeFileSyncAsUser(
      join(sims.unsourced!.dir, 'home', '.bashrc'),
      'source /usr/local/Ascend/ascend-toolkit/set_env.sh\n',
    );
    const again = await runEnv(core, 'unsourced');
    const rows = await core.call('sessions.compare', { a, b: again.sessionId });
    expect(rows.find((r) => r.checkId === 'env.set-env')).toMatchObject({
      a: 'warn',
      b: 'pass',
      change: 'improved',
    });
    expect(rows.find((r) => r.checkId === 'env.driver-cann')).toMatchObject({ change: 'same' });
    // each row names its check in words, as the session view shows it
    expect(en(rows.find((r) => r.checkId === 'env.version-matrix')!.title)).toBe(
      'CANN × torch × torch_npu × Python match the official matrix',
    );
  });

  it('CLI: amw run --json prints the documented shape, --junit writes one case per check, exit 1 on failure', async () => {
    const db = join(home, 'amw.db');
    const junit = join(tempDir(), 'env.xml');
    const r = await amw(
      [
        '--db',
        db,
        'run',
        'alarm',
        '--stage',
        'env',
        '--json',
        '--junit',
        junit,
        '--accept-new-host-key',
      ],
      { AMW_HOME: home },
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout);
    expect(Object.keys(out)).toEqual(['session', 'stage', 'host', 'status', 'checks']);
    expect(out).toMatchObject({ stage: 'env', host: 'alarm', status: 'fail' });
    expect(Object.keys(out.checks[0])).toEqual([
      'id',
      'title',
      'status',
      'summary',
      'evidence',
      'remediation',
    ]);
    const xml = readFileSync(junit, 'utf8');
    expect(xml.match(/<testcase /g)).toHaveLength(10);
    expect(xml).toMatch(/<failure message="[^"]*NPU 2\.0 Alarm/);
    const zh = await amw(['--db', db, '--lang', 'zh-CN', 'run', 'healthy', '--stage', 'env'], {
      AMW_HOME: home,
    });
    expect(zh.stdout).toContain('非交互式 shell 已具备 toolkit 环境');
    const bad = await amw(['--db', db, 'run', 'healthy', '--stage', 'nosuchstage'], {
      AMW_HOME: home,
    });
    expect(bad.code).toBe(2);
  });
});

function writeFileSyncAsUser(file: string, text: string): void {
  // the home belongs to the simulated user; keep its owner
  const st = statSync(file);
  writeFileSync(file, text);
  chownSync(file, st.uid, st.gid);
}

d('reruns and cut-off runs', () => {
  it('rerunning one check replaces just that result; a run cut off by a dead process reads as interrupted', async () => {
    const sim = await startSimHost('rerun', 'set-env-not-sourced');
    const dir = mkdtempSync(join(tmpdir(), 'amw-rerun-'));
    try {
      const c = createCore({
        env: { AMW_HOME: dir } as NodeJS.ProcessEnv,
        hostKeyPolicy: 'accept-new',
        userKnownHosts: [],
      });
      await registerSimHost(c, sim);
      const first = await runEnv(c, 'rerun');
      expect(first.checks.find((x) => x.id === 'env.set-env')!.status).toBe('warn');
      writeFileSyncAsUser(
        join(sim.dir, 'home', '.bashrc'),
        'source /usr/local/Ascend/ascend-toolkit/set_env.sh\n',
      );
      const started = await c.call('stages.run', {
        host: 'rerun',
        stage: 'env',
        sessionId: first.sessionId,
        checks: ['env.set-env'],
      });
      await c.jobs.wait(started.jobId);
      const s = await c.call('sessions.get', { id: first.sessionId });
      expect(s.runs).toHaveLength(1);
      expect(s.runs[0]!.checks).toHaveLength(10);
      expect(s.runs[0]!.checks.find((x) => x.id === 'env.set-env')!.status).toBe('pass');
      // an unknown check is refused at once, before a run or a job exists
      await expect(
        c.call('stages.run', {
          host: 'rerun',
          stage: 'env',
          sessionId: first.sessionId,
          checks: ['env.nope'],
        }),
      ).rejects.toMatchObject({ code: 'VALIDATION' });
      expect((await c.call('sessions.get', { id: first.sessionId })).runs).toHaveLength(1);
      // a run whose process died mid-way: its row stays "running" with a dead job owner
      const db = (await import('better-sqlite3')).default(join(dir, 'amw.db'));
      db.prepare(
        `INSERT INTO jobs (id, kind, status, created_at, owner_pid) VALUES ('dead', 'stage.env', 'running', ?, 999999)`,
      ).run(new Date().toISOString());
      db.prepare(
        `INSERT INTO stage_runs (session_id, stage, host_id, status, job_id, started_at) VALUES (?, 'env', 1, 'running', 'dead', ?)`,
      ).run(first.sessionId, new Date().toISOString());
      db.close();
      await c.close();
      const reopened = createCore({
        env: { AMW_HOME: dir } as NodeJS.ProcessEnv,
        hostKeyPolicy: 'accept-new',
        userKnownHosts: [],
      });
      const after = await reopened.call('sessions.get', { id: first.sessionId });
      expect(after.runs[0]!.status).toBe('interrupted');
      expect(after.runs[0]!.checks).toHaveLength(10); // the results already stored are kept
      await reopened.close();
    } finally {
      await sim.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
