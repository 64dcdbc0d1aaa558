import { execFileSync } from 'node:child_process';
import {
  chownSync,
  cpSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
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
import { REFERENCE } from '../support/reference';

const support = simHostsSupported();
const d = support.ok ? describe : describe.skip;

let sim: SimHost;
let core: Core;
let home: string;

async function runProfile(input: Record<string, unknown>) {
  const started = await core.call('stages.run', {
    hosts: ['npu'],
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
    // host text is escaped in Markdown (no links or HTML injected): read it as a renderer would
    expect((md.text ?? '').replace(/\\(.)/g, '$1')).toContain('(torch)');
  }, 300_000);
});

d(
  'gathering one run from two simulated hosts: every rank folder copied, the missing rank reported',
  () => {
    let a: SimHost;
    let b: SimHost;
    let c: Core;
    let dir: string;
    const F = `${REFERENCE}/fixtures/profiling/torch_npu_level1_rank0_ascend_pt`;

    beforeAll(async () => {
      a = await startSimHost('gather-a', 'ascend-910b');
      b = await startSimHost('gather-b', 'ascend-910b');
      // node a wrote rank 0, node b rank 2: rank 1's folder was never copied to either
      for (const [host, rank] of [
        [a, 0],
        [b, 2],
      ] as const) {
        const target = join(host.dir, 'home', 'prof', `node_rank${rank}_ascend_pt`);
        cpSync(F, target, { recursive: true });
        writeFileSync(join(target, 'profiler_info_0.json'), JSON.stringify({ rank_id: rank }));
        const { uid, gid } = statSync(join(host.dir, 'home'));
        execFileSync('chown', ['-R', `${uid}:${gid}`, join(host.dir, 'home', 'prof')]);
      }
      dir = mkdtempSync(join(tmpdir(), 'amw-gather-'));
      c = createCore({
        env: { AMW_HOME: dir } as NodeJS.ProcessEnv,
        hostKeyPolicy: 'accept-new',
        userKnownHosts: [],
      });
      await registerSimHost(c, a, { name: 'a' });
      await registerSimHost(c, b, { name: 'b' });
    }, 120_000);

    afterAll(async () => {
      await c?.close();
      await a?.stop();
      await b?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('profiling.gather: files from both hosts, sha256 checked, one import, rank 1 missing', async () => {
      const started = await c.call('profiling.gather', { hosts: ['a', 'b'], dir: 'prof' });
      const job = await c.jobs.wait(started.jobId);
      expect(job.status, JSON.stringify(job.error)).toBe('succeeded');
      const p = await c.call('profiling.get', { stageRunId: started.stageRunId });
      expect(p.source).toBe('a,b:prof');
      expect(p.ranks.map((r) => [r.rank, r.dir])).toEqual([
        [0, 'a/node_rank0_ascend_pt'],
        [2, 'b/node_rank2_ascend_pt'],
      ]);
      expect(p.warnings.map((w) => w.message)).toContainEqual({
        key: 'stage-profiling:warn.missingRanks',
        params: { ranks: '1' },
      });
      expect(p.steps.map((s) => s.rank)).toEqual([0, 2]);
      const run = await c.call('stages.get', { id: started.stageRunId });
      expect(run.checks.find((x) => x.id === 'prof.run')!.status).toBe('warn');
      // gathered again into the same run folder, nothing is copied twice: the hashes match
      const local = join(dir, 'profiles', String(started.stageRunId), 'a', 'node_rank0_ascend_pt');
      expect(existsSync(join(local, 'ASCEND_PROFILER_OUTPUT', 'kernel_details.csv'))).toBe(true);
    }, 300_000);

    it('with the world size known, every rank 0…N-1 not found is reported, the last ones too', async () => {
      const started = await c.call('profiling.gather', {
        hosts: ['a', 'b'],
        dir: 'prof',
        worldSize: 4,
      });
      const job = await c.jobs.wait(started.jobId);
      expect(job.status, JSON.stringify(job.error)).toBe('succeeded');
      const p = await c.call('profiling.get', { stageRunId: started.stageRunId });
      const missing = p.warnings.filter(
        (w) => w.message.key === 'stage-profiling:warn.missingRanks',
      );
      // ranks 0 and 2 were gathered: 1 (a gap) and 3 (past the highest one seen) are missing
      expect(missing.map((w) => w.message.params)).toEqual([{ ranks: '1, 3' }]);
    }, 300_000);

    it('a host without the folder is a warning naming it, the other host is still read', async () => {
      const cli = await amw(['profile', 'gather', 'a,b', 'prof/node_rank2_ascend_pt', '--json'], {
        AMW_HOME: dir,
      });
      expect(cli.code).toBe(0);
      const doc = JSON.parse(cli.stdout) as {
        ranks: { rank: number }[];
        warnings: { file: string; message: string }[];
      };
      expect(doc.ranks.map((r) => r.rank)).toEqual([2]);
      expect(doc.warnings[0]!.file).toBe('a');
      expect(doc.warnings[0]!.message).toMatch(/^Nothing gathered from a: /);
    }, 300_000);
  },
);

d('one profiling run on two simulated hosts at once (amw run a,b --stage profiling)', () => {
  let n1: SimHost;
  let n2: SimHost;
  let dir: string;

  beforeAll(async () => {
    n1 = await startSimHost('multi-1', 'ascend-910b');
    n2 = await startSimHost('multi-2', 'ascend-910b');
    for (const host of [n1, n2]) {
      const models = join(host.dir, 'home', 'models');
      cpSync(join(__dirname, '../fixtures/ops-models'), models, { recursive: true });
      const { uid, gid } = statSync(join(host.dir, 'home'));
      execFileSync('chown', ['-R', `${uid}:${gid}`, models]);
    }
    dir = mkdtempSync(join(tmpdir(), 'amw-multi-'));
    const c = createCore({
      env: { AMW_HOME: dir } as NodeJS.ProcessEnv,
      hostKeyPolicy: 'accept-new',
      userKnownHosts: [],
    });
    try {
      await registerSimHost(c, n1, { name: 'n1' });
      await registerSimHost(c, n2, { name: 'n2' });
    } finally {
      await c.close();
    }
  }, 120_000);

  afterAll(async () => {
    await n1?.stop();
    await n2?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const run = (lang: string, ...more: string[]) =>
    amw(
      [
        '--lang',
        lang,
        'run',
        'n1,n2',
        '--stage',
        'profiling',
        '--entry',
        'models/models.py:attention',
        '--steps',
        '1',
        '--accept-new-host-key',
        '--json',
        ...more,
      ],
      { AMW_HOME: dir },
    );
  type Doc = {
    host: string;
    source: string;
    ranks: { dir: string }[];
    stepTimes: unknown[];
    warnings: { file: string; message: string }[];
    stageRunId: number;
  };

  it('both nodes profiled and gathered into one profile; texts in the language asked for', async () => {
    const r = await run('zh-CN');
    expect(r.stderr).toBe('');
    const doc = JSON.parse(r.stdout) as Doc;
    expect(doc.host).toBe('n1,n2');
    expect(doc.source).toMatch(/^n1:\/.*\.amw\/profiles\/run-\d+-\d+,n2:\/.*$/);
    // each node's folder under its host's name, one step each
    expect(doc.ranks.map((x) => x.dir.split('/')[0]).sort()).toEqual(['n1', 'n2']);
    expect(doc.stepTimes).toHaveLength(2);
    for (const h of ['n1', 'n2'])
      expect(existsSync(join(dir, 'profiles', String(doc.stageRunId), h))).toBe(true);
    // the stand-in warning is rendered in Chinese, not English (--lang zh-CN)
    expect(doc.warnings[0]!.message).toContain('torch.profiler');
    expect(doc.warnings[0]!.message).toMatch(/[\u4e00-\u9fff]/);
  }, 600_000);

  it('--ranks-per-host 2 on two nodes: ranks 0-1 on n1 and 2-3 on n2, each its own folder, none missing', async () => {
    const r = await run('en', '--ranks-per-host', '2');
    const doc = JSON.parse(r.stdout) as Omit<Doc, 'ranks'> & {
      ranks: { rank: number | null; dir: string }[];
    };
    expect(doc.ranks.map((x) => [x.rank, x.dir])).toEqual([
      [0, 'n1/rank_0'],
      [1, 'n1/rank_1'],
      [2, 'n2/rank_2'],
      [3, 'n2/rank_3'],
    ]);
    expect(doc.warnings.map((w) => w.message)).toEqual(
      expect.arrayContaining([
        'n2: 2, 3 ranks launched with torchrun (--nproc_per_node 2, backend gloo); each node is its own torchrun world.',
      ]),
    );
    expect(doc.warnings.some((w) => w.message.startsWith('Ranks missing'))).toBe(false);
  }, 600_000);

  it('a node that cannot be reached is named in the warnings; the other node is still read', async () => {
    await n2.stop();
    const r = await run('en');
    const doc = JSON.parse(r.stdout) as Doc;
    expect(doc.ranks.map((x) => x.dir.split('/')[0])).toEqual(['n1']);
    const failed = doc.warnings.find((w) => w.file === 'n2');
    expect(failed?.message).toMatch(/^Nothing gathered from n2: /);
  }, 600_000);
});

d(
  'several ranks per node: torchrun --nproc_per_node 2 on a simulated host (gloo on the CPU)',
  () => {
    let node: SimHost;
    let c: Core;
    let dir: string;

    beforeAll(async () => {
      node = await startSimHost('ranks-1', 'ascend-910b');
      const models = join(node.dir, 'home', 'models');
      cpSync(join(__dirname, '../fixtures/ops-models'), models, { recursive: true });
      // a rank that dies without a word before its first step, as a crashed worker does
      writeFileSync(
        join(models, 'drop_rank1.py'),
        [
          'import os',
          'from models import attention',
          'def entry():',
          '    if os.environ.get("RANK") == "1":',
          '        os._exit(0)',
          '    return attention()',
          '',
        ].join('\n'),
      );
      const { uid, gid } = statSync(join(node.dir, 'home'));
      execFileSync('chown', ['-R', `${uid}:${gid}`, models]);
      dir = mkdtempSync(join(tmpdir(), 'amw-ranks-'));
      c = createCore({
        env: { AMW_HOME: dir } as NodeJS.ProcessEnv,
        hostKeyPolicy: 'accept-new',
        userKnownHosts: [],
      });
      await registerSimHost(c, node, { name: 'r1' });
    }, 120_000);

    afterAll(async () => {
      await c?.close();
      await node?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    const profile = async (entry: string) => {
      const started = await c.call('stages.run', {
        hosts: ['r1'],
        stage: 'profiling',
        entry,
        steps: 1,
        ranksPerHost: 2,
      } as never);
      const job = await c.jobs.wait(started.jobId);
      if (job.status !== 'succeeded') throw new Error(JSON.stringify(job.error));
      return c.call('profiling.get', { stageRunId: started.stageRunId });
    };

    it('both ranks write their own trace, both are gathered and read as ranks 0 and 1; torchrun and gloo are said', async () => {
      const p = await profile('models/models.py:attention');
      expect(p.ranks.map((r) => [r.rank, r.dir])).toEqual([
        [0, 'rank_0'],
        [1, 'rank_1'],
      ]);
      const ranksWithSteps = new Set(p.stepTimes.map((s) => s.rank));
      expect(ranksWithSteps).toEqual(new Set([0, 1]));
      const texts = p.warnings.map((w) => en(w.message));
      expect(texts).toContain(
        'r1: 0, 1 ranks launched with torchrun (--nproc_per_node 2, backend gloo); each node is its own torchrun world.',
      );
      expect(texts).toContain('No NPU on r1: its ranks joined a gloo process group on the CPU.');
      expect(texts.some((x) => x.startsWith('Ranks missing'))).toBe(false);
    }, 300_000);

    it('a rank that exits before writing anything is reported missing; the other rank is still read', async () => {
      const p = await profile('models/drop_rank1.py:entry');
      expect(p.ranks.map((r) => r.rank)).toEqual([0]);
      const texts = p.warnings.map((w) => en(w.message));
      expect(texts).toContain('Ranks missing from the folders read: 1.');
      expect(texts).toContain(
        'Ranks 1 on r1 ended without a result (exited early or crashed): their output may be missing or partial.',
      );
      expect(p.stepTimes.length).toBeGreaterThan(0);
    }, 300_000);
  },
);
