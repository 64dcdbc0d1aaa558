import { mkdtempSync, rmSync } from 'node:fs';
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
import { REFERENCE } from '../support/reference';

const support = simHostsSupported();
const d = support.ok ? describe : describe.skip;

let sim: SimHost;
let core: Core;
let home: string;

async function wait(started: { jobId: string }) {
  const job = await core.jobs.wait(started.jobId);
  if (job.status !== 'succeeded') throw new Error(JSON.stringify(job.error));
  return job.result;
}

d('a renamed host keeps its sessions, runs, waivers and review comments', () => {
  beforeAll(async () => {
    sim = await startSimHost('rename-host', 'torch-npu-mismatch');
    home = mkdtempSync(join(tmpdir(), 'amw-rename-'));
    core = createCore({
      env: { AMW_HOME: home } as NodeJS.ProcessEnv,
      hostKeyPolicy: 'accept-new',
      userKnownHosts: [],
    });
    await registerSimHost(core, sim, { name: '10.0.0.5' });
  }, 120_000);

  afterAll(async () => {
    await core?.close();
    await sim?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('renaming follows the host everywhere it is named, and a run there afterwards joins them', async () => {
    await core.call('projects.create', { name: 'llama', targetHosts: ['10.0.0.5'] });
    const { id: sessionId } = await core.call('sessions.create', { project: 'llama' });
    await wait(await core.call('stages.run', { host: '10.0.0.5', stage: 'env', sessionId }));
    const failures = (await core.call('sessions.get', { id: sessionId })).runs[0]!.checks.filter(
      (c) => c.status === 'fail',
    );
    expect(failures.length).toBeGreaterThan(0);
    const failing = failures[0]!;
    for (const c of failures)
      await core.call('checks.waive', {
        sessionId,
        host: '10.0.0.5',
        checkId: c.id,
        reason: 'fixed by the image',
        by: 'Li',
      });
    // one taken back and given again: the timeline reads that from the audit log
    await core.call('checks.unwaive', {
      sessionId,
      host: '10.0.0.5',
      checkId: failing.id,
      by: 'Wang',
    });
    await core.call('checks.waive', {
      sessionId,
      host: '10.0.0.5',
      checkId: failing.id,
      reason: 'fixed by the image',
      by: 'Li',
    });
    await core.call('reports.comment', {
      source: { sessionId },
      target: `check:${failing.id}@10.0.0.5`,
      author: 'Li',
      text: 'see the image notes',
    });

    await core.call('hosts.update', { name: '10.0.0.5', patch: { name: 'npu-a' } });
    // a patch of the name alone leaves the rest as it was (the port is not reset to 22)
    expect(await core.call('hosts.get', { name: 'npu-a' })).toMatchObject({
      hostname: sim.host,
      port: sim.port,
      username: sim.user,
    });

    const s = await core.call('sessions.get', { id: sessionId });
    expect(s.hosts).toEqual(['npu-a']);
    expect(s.runs.map((r) => r.host)).toEqual(['npu-a']);
    expect(s.runs[0]!.checks.find((c) => c.id === failing.id)!.waiver).toMatchObject({ by: 'Li' });
    expect(s.runs[0]!.status).not.toBe('fail');
    expect(
      (await core.call('projects.list', {})).find((p) => p.name === 'llama')!.targetHosts,
    ).toEqual(['npu-a']);
    const report = await core.call('reports.build', { source: { sessionId }, language: 'en' });
    expect(report.review.comments.map((c) => c.target)).toEqual([`check:${failing.id}@npu-a`]);
    const timeline = await core.call('sessions.timeline', { id: sessionId });
    const hosts = timeline.flatMap((e) =>
      e.kind === 'run' || e.kind === 'waiver' ? [e.host] : [],
    );
    expect(new Set(hosts)).toEqual(new Set(['npu-a']));
    expect(JSON.stringify(timeline)).not.toContain('10.0.0.5');

    // the next run there is the same host's: one column, the waiver still on it
    await wait(await core.call('stages.run', { host: 'npu-a', stage: 'env', sessionId }));
    const after = await core.call('sessions.get', { id: sessionId });
    expect([...new Set(after.runs.map((r) => r.host))]).toEqual(['npu-a']);
    expect(
      after.runs
        .flatMap((r) => r.checks)
        .filter((c) => c.id === failing.id)
        .every((c) => c.waiver?.by === 'Li'),
    ).toBe(true);
  }, 120_000);

  it('an import labelled like the renamed host, in a session that does not target it, keeps its label', async () => {
    const { id } = await core.call('sessions.create', { title: 'dumps' });
    await core.call('precision.import', {
      path: join(REFERENCE, 'fixtures/precision/msprobe_default_config'),
      sessionId: id,
    });
    const label = (await core.call('sessions.get', { id })).runs[0]!.host;
    await core.call('hosts.add', { name: label, hostname: '10.0.0.7', port: 22, tags: [] });
    await core.call('hosts.update', { name: label, patch: { name: 'npu-c' } });
    expect((await core.call('sessions.get', { id })).runs[0]!.host).toBe(label);
    // and the label is history now: no host may take it back
    await expect(
      core.call('hosts.update', { name: 'npu-c', patch: { name: label } }),
    ).rejects.toMatchObject({ code: 'CONFLICT' });
  });

  it('a rename onto a name in use is refused and changes nothing', async () => {
    await core.call('hosts.add', { name: 'npu-b', hostname: '10.0.0.6', port: 22, tags: [] });
    await expect(
      core.call('hosts.update', { name: 'npu-a', patch: { name: 'npu-b' } }),
    ).rejects.toMatchObject({ code: 'CONFLICT' });
    const sessions = await core.call('sessions.list', {});
    for (const s of sessions) expect(s.hosts).not.toContain('npu-b');
  });
});
