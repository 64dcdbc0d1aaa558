import {
  chownSync,
  cpSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs';
import { createHash } from 'node:crypto';
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
import type { StageRunRecord } from '../../shared/api';
import { amw } from '../support/cli';
import { en } from '../support/text';

const support = simHostsSupported();
const d = support.ok ? describe : describe.skip;

let sim: SimHost;
let core: Core;
let home: string;

async function runProfile(input: Record<string, unknown>) {
  const started = await core.call('stages.run', {
    host: 'npu',
    stage: 'profiling',
    ...input,
  } as never);
  const job = await core.jobs.wait(started.jobId);
  if (job.status !== 'succeeded') throw new Error(JSON.stringify(job.error));
  return { run: job.result as StageRunRecord, stageRunId: started.stageRunId };
}

d('profiling stage on a simulated host with CPU PyTorch (torch.profiler as the stand-in)', () => {
  beforeAll(async () => {
    sim = await startSimHost('prof-host', 'ascend-910b'); // torch_npu stand-in without a profiler
    const models = join(sim.dir, 'home', 'models');
    cpSync(join(__dirname, '../fixtures/ops-models'), models, { recursive: true });
    const { uid, gid } = statSync(join(sim.dir, 'home'));
    chownSync(models, uid, gid);
    home = mkdtempSync(join(tmpdir(), 'amw-prof-'));
    core = createCore({
      env: { AMW_HOME: home } as NodeJS.ProcessEnv,
      hostKeyPolicy: 'accept-new',
      userKnownHosts: [],
    });
    await registerSimHost(core, sim, { name: 'npu' });
  }, 120_000);

  afterAll(async () => {
    await core?.close();
    await sim?.stop();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it('profiles N steps, gathers the trace over SFTP (sha256 kept), reads it with the import parsers, says it is a stand-in', async () => {
    const { run, stageRunId } = await runProfile({
      entry: 'models/models.py:attention',
      steps: 3,
      backward: true,
    });
    const p = await core.call('profiling.get', { stageRunId });
    expect(p.profiler).toBe('torch.profiler');
    expect(p.kind).toBe('torch');
    expect(p.source).toMatch(/^npu:\/.*\.amw\/profiles\/run-\d+-\d+$/);
    // the schedule's warm-up step is not profiled: three ProfilerStep# events, consecutive
    const numbers = p.stepTimes.map((s) => s.step!);
    expect(numbers).toHaveLength(3);
    expect(numbers).toEqual([numbers[0], numbers[0]! + 1, numbers[0]! + 2]);
    expect(p.stepTimes.every((s) => s.us > 0)).toBe(true);
    expect(p.timeline!.ops.map((o) => o.name)).toEqual(expect.arrayContaining(['aten::bmm']));
    expect(p.kernels).toBeNull(); // a CPU run has no NPU kernels
    expect(p.warnings[0]!.message.key).toBe('stage-profiling:warn.standIn');
    // the gathered file is in the data dir, its hash as the host had it
    const gathered = join(home, 'profiles', String(stageRunId), 'npu');
    expect(existsSync(gathered)).toBe(true);
    const checks = Object.fromEntries(run.checks.map((c) => [c.id, c]));
    expect(checks['prof.run']!.status).toBe('warn');
    expect(en(checks['prof.run']!.summary)).toContain('(torch)');
    expect(checks['prof.step-time']!.status).toBe('skip');
    expect(checks['prof.aicpu']!.status).toBe('skip');
    expect(checks['prof.free']!.status).toBe('skip');
    // a second run with this one as the baseline: the step-time check compares
    const again = await runProfile({
      entry: 'models/models.py:attention',
      steps: 2,
      baseline: stageRunId,
      targetRatio: 50,
    });
    const st = again.run.checks.find((c) => c.id === 'prof.step-time')!;
    expect(st.status).toBe('pass');
    expect(en(st.summary)).toMatch(/Mean step [\d.]+ ms against [\d.]+ ms on the GPU baseline/);
    const cmp = await core.call('profiling.compare', { a: stageRunId, b: again.stageRunId });
    expect(cmp.stepRatio).toBeGreaterThan(0);
    expect(cmp.byOpType.some((r) => r.name === 'aten::bmm')).toBe(true);
  }, 300_000);

  it('the files are checksummed: the stored list matches the bytes on disk', async () => {
    const { stageRunId } = await runProfile({ entry: 'models/models.py:attention', steps: 1 });
    const dir = join(home, 'profiles', String(stageRunId), 'npu');
    const { db } = await import('../../electron/core/db/open').then((m) =>
      m.openStore(join(home, 'amw.db')),
    );
    const rows = db
      .prepare('SELECT path, size, sha256 FROM profile_files WHERE stage_run_id = ?')
      .all(stageRunId) as { path: string; size: number; sha256: string }[];
    db.close();
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) {
      const buf = readFileSync(join(dir, r.path));
      expect(buf.length).toBe(r.size);
      expect(createHash('sha256').update(buf).digest('hex')).toBe(r.sha256);
    }
    expect(rows.some((r) => r.path.endsWith('.pt.trace.json'))).toBe(true);
  }, 300_000);

  it('a broken entry fails prof.run with the traceback; nothing is gathered', async () => {
    const { run } = await runProfile({ entry: 'models/models.py:broken' });
    const c = run.checks.find((x) => x.id === 'prof.run')!;
    expect(c.status).toBe('fail');
    expect(en(c.summary)).toContain('FileNotFoundError');
    expect(run.status).toBe('fail');
  }, 300_000);

  it('amw run --stage profiling --json prints the profile document; the report has the section', async () => {
    const r = await amw(
      [
        'run',
        'npu',
        '--stage',
        'profiling',
        '--entry',
        'models/models.py:attention',
        '--steps',
        '2',
        '--json',
      ],
      { AMW_HOME: home },
    );
    expect(r.stderr).toBe('');
    const doc = JSON.parse(r.stdout) as {
      stage: string;
      profiler: string;
      kind: string;
      stepTimes: unknown[];
      checks: { id: string }[];
      session: number;
    };
    expect(doc).toMatchObject({
      stage: 'profiling',
      host: 'npu',
      profiler: 'torch.profiler',
      kind: 'torch',
    });
    expect(doc.stepTimes).toHaveLength(2);
    expect(doc.checks.map((c) => c.id)).toEqual([
      'prof.run',
      'prof.aicpu',
      'prof.free',
      'prof.communication',
      'prof.dynamic-shapes',
      'prof.step-time',
    ]);
    const md = await core.call('reports.export', {
      source: { sessionId: doc.session },
      format: 'md',
      language: 'en',
      hideNames: false,
    });
    expect(md.text).toContain('## Profiling');
    expect(md.text).toContain('(torch)');
  }, 300_000);
});
