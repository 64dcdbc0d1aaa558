import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../../tests/support/temp';
import { REFERENCE } from '../../../tests/support/reference';
import { createCore } from '../api/core';
import { stageStatus } from './repository';
import { LOCAL_TARGET } from '../../../shared/api/hosts';

describe('sessions', () => {
  it('a project session records the commit of its local git checkout', async () => {
    const repo = tempDir();
    execFileSync('git', ['init', '-q', repo]);
    writeFileSync(join(repo, 'train.py'), 'import torch\n');
    execFileSync('git', ['-C', repo, 'add', '.']);
    execFileSync('git', [
      '-C',
      repo,
      '-c',
      'user.email=t@example.invalid',
      '-c',
      'user.name=t',
      'commit',
      '-qm',
      'x',
    ]);
    const head = execFileSync('git', ['-C', repo, 'rev-parse', 'HEAD'], {
      encoding: 'utf8',
    }).trim();
    const core = createCore({ env: { AMW_HOME: tempDir() } as NodeJS.ProcessEnv });
    await core.call('projects.create', {
      name: 'llama-sft',
      codeLocation: repo,
      baseline: { gpuModel: 'A100', stepTimeMs: 850 },
    });
    const s = await core.call('sessions.create', { project: 'llama-sft' });
    expect(s.codeCommit).toBe(head);
    expect(s.title).toMatch(/^llama-sft /);
    await expect(core.call('projects.create', { name: 'llama-sft' })).rejects.toMatchObject({
      code: 'CONFLICT',
    });
    await expect(core.call('sessions.create', { project: 'nope' })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    await core.close();
  });

  it('a project is edited field by field; a session takes hosts added and removed later', async () => {
    const core = createCore({ env: { AMW_HOME: tempDir() } as NodeJS.ProcessEnv });
    await core.call('hosts.add', { name: 'npu-a', hostname: '10.0.0.1', port: 22, tags: [] });
    await core.call('hosts.add', { name: 'npu-b', hostname: '10.0.0.2', port: 22, tags: [] });
    await core.call('projects.create', {
      name: 'p',
      targetHosts: [],
      baseline: { gpuModel: 'A100', stepTimeMs: 850 },
    });
    const edited = await core.call('projects.update', { name: 'p', targetHosts: ['npu-a'] });
    // fields not given stay as they were
    expect(edited).toMatchObject({ targetHosts: ['npu-a'], baseline: { stepTimeMs: 850 } });
    expect(
      (await core.call('projects.update', { name: 'p', codeLocation: '/src', baseline: null }))
        .baseline,
    ).toBeNull();
    await expect(core.call('projects.update', { name: 'nope' })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    const s = await core.call('sessions.create', { title: 'no hosts' });
    expect(s.hosts).toEqual([]);
    const two = await core.call('sessions.setHosts', { id: s.id, hosts: ['npu-a', 'npu-b'] });
    expect(two.hosts).toEqual(['npu-a', 'npu-b']);
    expect((await core.call('sessions.setHosts', { id: s.id, hosts: ['npu-b'] })).hosts).toEqual([
      'npu-b',
    ]);
    await expect(
      core.call('sessions.setHosts', { id: s.id, hosts: ['ghost'] }),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await core.close();
  });

  it('a stage passes only when every failure is waived', () => {
    const c = (status: 'pass' | 'warn' | 'fail' | 'error', waived = false) => ({
      id: status,
      title: { en: '', 'zh-CN': '' },
      status,
      summary: { en: '', 'zh-CN': '' },
      evidence: null,
      remediation: null,
      waiver: waived ? { reason: 'known', by: 'x', at: '' } : null,
    });
    expect(stageStatus([c('pass'), c('fail')])).toBe('fail');
    expect(stageStatus([c('pass'), c('fail', true)])).toBe('pass');
    expect(stageStatus([c('warn'), c('fail', true)])).toBe('warn');
    expect(stageStatus([c('error')])).toBe('error');
  });

  it('a code finding the team accepts is waived on this machine: the session can then be approved', async () => {
    const core = createCore({ env: { AMW_HOME: tempDir() } as NodeJS.ProcessEnv });
    const src = tempDir();
    writeFileSync(join(src, 'train.py'), 'import torch\nx = torch.randn(2).cuda()\n');
    const s = await core.call('sessions.create', { title: 'code only' });
    const scan = await core.call('code.scan', { path: src, sessionId: s.id });
    expect((await core.jobs.wait(scan.jobId)).status).toBe('succeeded');
    const run = () => core.call('sessions.get', { id: s.id }).then((x) => x.runs[0]!);
    const failing = (await run()).checks.filter((c) => c.status === 'fail');
    expect(failing.length).toBeGreaterThan(0);
    const approve = () =>
      core.call('reports.decide', { source: { sessionId: s.id }, decision: 'approve', by: 'Li' });
    await expect(approve()).rejects.toMatchObject({ code: 'CONFLICT' });
    // a check that never ran there is refused, naming it
    await expect(
      core.call('checks.waive', {
        sessionId: s.id,
        checkId: 'code.no-such-rule',
        host: LOCAL_TARGET,
        reason: 'n/a',
        by: 'Li',
      }),
    ).rejects.toMatchObject({ code: 'NOT_FOUND', message: /code\.no-such-rule/ });
    for (const c of failing)
      await core.call('checks.waive', {
        sessionId: s.id,
        checkId: c.id,
        host: (await run()).host,
        reason: 'runs on the GPU build only',
        by: 'Li',
      });
    expect((await run()).status).not.toBe('fail');
    expect((await run()).checks.find((c) => c.id === failing[0]!.id)!.waiver).toMatchObject({
      by: 'Li',
    });
    await approve();
    // the waiver stays through a rescan of the same code, and can be taken back
    const again = await core.call('code.scan', { path: src, sessionId: s.id });
    await core.jobs.wait(again.jobId);
    const rescanned = await core.call('sessions.get', { id: s.id });
    expect(rescanned.runs.filter((r) => r.stage === 'code')).toHaveLength(1);
    expect(rescanned.runs[0]!.checks.find((c) => c.id === failing[0]!.id)!.waiver).not.toBeNull();
    // each waiver in force is in the timeline once (not again from the audit log)
    expect(
      (await core.call('sessions.timeline', { id: s.id })).filter((e) => e.kind === 'waiver'),
    ).toHaveLength(failing.length);
    for (const c of failing)
      await core.call('checks.unwaive', {
        sessionId: s.id,
        checkId: c.id,
        host: LOCAL_TARGET,
        by: 'Wang',
      });
    expect((await run()).status).toBe('fail');
    // the timeline keeps both: who waived, and who took it back
    const timeline = await core.call('sessions.timeline', { id: s.id });
    expect(timeline.filter((e) => e.kind === 'waiver-removed')).toHaveLength(failing.length);
    expect(timeline.find((e) => e.kind === 'waiver-removed')).toMatchObject({
      host: LOCAL_TARGET,
      by: 'Wang',
      waivedBy: 'Li',
    });
    // the waivers themselves stay in it as they were given: by whom, why
    const given = timeline.filter((e) => e.kind === 'waiver');
    expect(given).toHaveLength(failing.length);
    expect(given[0]).toMatchObject({ by: 'Li', reason: 'runs on the GPU build only' });
    // taking back what is not there records nothing
    await core.call('checks.unwaive', {
      sessionId: s.id,
      checkId: failing[0]!.id,
      host: LOCAL_TARGET,
      by: 'Wang',
    });
    // and nobody takes one back unnamed (the engine refuses it, as the app does)
    await expect(
      core.call('checks.unwaive', {
        sessionId: s.id,
        checkId: failing[0]!.id,
        host: LOCAL_TARGET,
      } as never),
    ).rejects.toMatchObject({ code: 'VALIDATION' });
    expect(
      (await core.call('sessions.timeline', { id: s.id })).filter(
        (e) => e.kind === 'waiver-removed',
      ),
    ).toHaveLength(failing.length);
    await core.close();
  });

  it("a session's timeline holds its own taken-back waivers, not another's whose id starts alike", async () => {
    const core = createCore({ env: { AMW_HOME: tempDir() } as NodeJS.ProcessEnv });
    const src = tempDir();
    writeFileSync(join(src, 'train.py'), 'import torch\nx = torch.randn(2).cuda()\n');
    const ids: number[] = [];
    for (let i = 0; i < 11; i++)
      ids.push((await core.call('sessions.create', { title: `s${i}` })).id);
    expect(ids.slice(0, 1).concat(ids.slice(9))).toEqual([1, 10, 11]);
    const waiveAndTakeBack = async (id: number, by: string) => {
      const scan = await core.call('code.scan', { path: src, sessionId: id });
      expect((await core.jobs.wait(scan.jobId)).status).toBe('succeeded');
      const run = (await core.call('sessions.get', { id })).runs[0]!;
      const check = run.checks.find((c) => c.status === 'fail')!;
      const at = { sessionId: id, checkId: check.id, host: run.host };
      await core.call('checks.waive', { ...at, reason: 'GPU build only', by });
      await core.call('checks.unwaive', { ...at, by });
    };
    const who: [number, string][] = [
      [1, 'One'],
      [10, 'Ten'],
      [11, 'Eleven'],
    ];
    for (const [id, by] of who) await waiveAndTakeBack(id, by);
    for (const [id, by] of who) {
      const timeline = await core.call('sessions.timeline', { id });
      const removed = timeline.filter((e) => e.kind === 'waiver-removed');
      expect(removed).toEqual([expect.objectContaining({ by, waivedBy: by, host: LOCAL_TARGET })]);
      const given = timeline.filter((e) => e.kind === 'waiver');
      expect(given).toEqual([expect.objectContaining({ by, reason: 'GPU build only' })]);
    }
    await core.close();
  });

  it("an imported run's check is waived where the import names it; a passing check is not waivable", async () => {
    const core = createCore({ env: { AMW_HOME: tempDir() } as NodeJS.ProcessEnv });
    const s = await core.call('sessions.create', { title: 'msprobe dumps' });
    await core.call('precision.import', {
      path: join(REFERENCE, 'fixtures/precision/msprobe_default_config'),
      sessionId: s.id,
    });
    const run = () => core.call('sessions.get', { id: s.id }).then((x) => x.runs[0]!);
    expect((await run()).host).toBe('msprobe');
    const waive = (checkId: string) =>
      core.call('checks.waive', {
        sessionId: s.id,
        checkId,
        host: 'msprobe',
        reason: 'nondeterminism is expected in this model',
        by: 'Li',
      });
    await waive('precision.determinism');
    expect(
      (await run()).checks.find((c) => c.id === 'precision.determinism')!.waiver,
    ).toMatchObject({ by: 'Li' });
    expect((await run()).status).toBe('pass');
    // a check that passed has nothing to waive
    await expect(waive('precision.dump')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    // a host of the same name added and removed later takes nothing with it
    await core.call('hosts.add', { name: 'msprobe', hostname: '10.0.0.9', port: 22, tags: [] });
    await core.call('hosts.remove', { name: 'msprobe' });
    expect(
      (await run()).checks.find((c) => c.id === 'precision.determinism')!.waiver,
    ).not.toBeNull();
    await core.close();
  });
});
