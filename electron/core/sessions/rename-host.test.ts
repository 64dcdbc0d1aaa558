import Database from 'better-sqlite3';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../../tests/support/temp';
import { createCore } from '../api/core';
import { openStore } from '../db/open';
import { HostRepository } from '../hosts/repository';
import { STAGE_DEFINITIONS } from '../stages/registry';
import { nameHasHistory, renameInCheckId, type RenameScope } from './rename-host';
import { SessionRepository } from './repository';

const SCOPE: RenameScope = {
  multiHostStages: new Set(
    STAGE_DEFINITIONS.filter((d) => d.shared.runsOn === 'hosts').map((d) => d.shared.id),
  ),
  columns: STAGE_DEFINITIONS.flatMap((d) => d.hostColumns ?? []),
};

/** The real repositories over a real SQLite file; runs stored as a stage stores them. */
function store() {
  const { db } = openStore(join(tempDir(), 'amw.db'));
  const hosts = new HostRepository(db);
  const sessions = new SessionRepository(db);
  const add = (name: string) => hosts.add({ name, hostname: '10.0.0.1', port: 22, tags: [] });
  const rename = (from: string, to: string) =>
    db.transaction(() => {
      const { id } = hosts.get(from);
      hosts.update(from, { name: to });
      sessions.renameHost({ id, from, to }, SCOPE);
    })();
  const failing = (
    session: number,
    target: string,
    hostId: number | null,
    checkId: string,
    stage = 'env',
  ) => {
    const run = sessions.startRun(session, stage, { hostId, target, addHosts: target.split(',') });
    sessions.finishRun(run, 'fail', [
      {
        id: checkId,
        title: { key: 'x' },
        status: 'fail',
        summary: { key: 's' },
        evidence: null,
        remediation: null,
      },
    ]);
    return run;
  };
  const line = (sessionId: number) =>
    sessions
      .history(sessionId)
      .filter((e) => e.kind === 'waiver' || e.kind === 'waiver-removed')
      .map((e) => `${e.kind} ${e.checkId} ${e.host} ${e.by}`)
      .sort();
  return { db, hosts, sessions, add, rename, failing, line };
}

describe('the timeline of waivers', () => {
  it('the same waiver on two hosts, one taken back: each listed once, where it was', () => {
    const { sessions, add, failing, line } = store();
    const [a, b] = [add('a'), add('b')];
    const s = sessions.createSession({ hosts: ['a', 'b'] });
    failing(s, 'a', a.id, 'env.x');
    failing(s, 'b', b.id, 'env.x');
    sessions.waive(s, 'b', 'env.x', 'GPU only', 'Li');
    sessions.waive(s, 'a', 'env.x', 'GPU only', 'Li');
    sessions.unwaive(s, 'a', 'env.x', 'Wang');
    expect(line(s)).toEqual([
      'waiver env.x a Li',
      'waiver env.x b Li',
      'waiver-removed env.x a Wang',
    ]);
  });
});

describe('a renamed host', () => {
  it('its waivers taken back read by its new name; nothing in the timeline keeps the old one', () => {
    const { sessions, add, rename, failing, line } = store();
    const a = add('a');
    const s = sessions.createSession({ hosts: ['a'] });
    failing(s, 'a', a.id, 'env.x');
    failing(s, 'a', a.id, 'env.y');
    sessions.waive(s, 'a', 'env.x', 'GPU only', 'Li');
    sessions.unwaive(s, 'a', 'env.x', 'Wang');
    sessions.waive(s, 'a', 'env.y', 'known', 'Li');
    rename('a', 'z');
    expect(line(s)).toEqual([
      'waiver env.x z Li',
      'waiver env.y z Li',
      'waiver-removed env.x z Wang',
    ]);
    expect(sessions.session(s).hosts).toEqual(['z']);
  });

  it("a fleet check's per-host ids follow, so its waiver holds on the next run", () => {
    const { sessions, add, rename, failing } = store();
    add('a');
    add('b');
    const s = sessions.createSession({ hosts: ['a', 'b'] });
    failing(s, 'a,b', null, 'dist.link@a#0', 'distributed');
    sessions.waive(s, 'a,b', 'dist.link@a#0', 'cable swap planned', 'Li');
    rename('a', 'x');
    failing(s, 'x,b', null, 'dist.link@x#0', 'distributed');
    const runs = sessions.session(s).runs;
    expect(runs.map((r) => r.host)).toEqual(['x,b']);
    expect(runs[0]!.checks.map((c) => [c.id, c.waiver?.by])).toEqual([['dist.link@x#0', 'Li']]);
    expect(renameInCheckId('dist.link@ab#0', 'a', 'x')).toBe('dist.link@ab#0');
    expect(renameInCheckId('env.limits', 'a', 'x')).toBe('env.limits');
  });

  it('takes neither an import labelled like it nor the runs of a removed host of the same name', async () => {
    const { sessions, hosts, add, rename, failing, line } = store();
    // a removed machine called "a", with a run in session 1 and a waiver taken back there
    const old = add('a');
    const first = sessions.createSession({ hosts: ['a'] });
    failing(first, 'a', old.id, 'env.x');
    sessions.waive(first, 'a', 'env.x', 'GPU only', 'Li');
    sessions.unwaive(first, 'a', 'env.x', 'Wang');
    hosts.remove('a');
    await new Promise((r) => setTimeout(r, 5)); // (times are stored to the millisecond)
    // another machine called "a" later, in a session that also holds an import labelled "a"
    const now = add('a');
    const second = sessions.createSession({ hosts: ['a'] });
    failing(second, 'a', now.id, 'env.x');
    const imported = sessions.startRun(second, 'precision', {
      hostId: null,
      target: 'a',
      addHosts: [],
    });
    rename('a', 'new-box');
    expect(sessions.session(first).runs.map((r) => r.host)).toEqual(['a']);
    expect(sessions.session(first).hosts).toEqual(['a']);
    // its timeline, read from the audit log, keeps naming that machine as it was
    expect(line(first)).toEqual(['waiver env.x a Li', 'waiver-removed env.x a Wang']);
    expect(sessions.run(imported).host).toBe('a');
    expect(
      sessions
        .session(second)
        .runs.map((r) => r.host)
        .sort(),
    ).toEqual(['a', 'new-box']);
    // and "a" still names that history: another host may not take the name
    expect(nameHasHistory(sessions['db' as never], 'a')).toBe(true);
    expect(nameHasHistory(sessions['db' as never], 'free')).toBe(false);
  });
});

describe('renaming through the engine', () => {
  it('is refused onto a name the history of a removed host uses, and while a job works on the host', async () => {
    const home = tempDir();
    const core = createCore({ env: { AMW_HOME: home } as NodeJS.ProcessEnv });
    await core.call('hosts.add', { name: 'gone', hostname: '10.0.0.2', port: 22, tags: [] });
    await core.call('sessions.create', { title: 'old', hosts: ['gone'] });
    await core.call('hosts.remove', { name: 'gone' });
    await core.call('hosts.add', { name: 'npu-a', hostname: '10.0.0.3', port: 22, tags: [] });
    await expect(
      core.call('hosts.update', { name: 'npu-a', patch: { name: 'gone' } }),
    ).rejects.toMatchObject({ code: 'CONFLICT', message: /gone still names/ });
    // a job on the host, as the jobs table has it while it runs
    const raw = new Database(core.location.dbPath);
    raw
      .prepare(
        `INSERT INTO jobs (id, kind, params, status, created_at) VALUES ('j1', 'inventory', ?, 'running', ?)`,
      )
      .run(JSON.stringify({ name: 'npu-a' }), new Date().toISOString());
    raw.close();
    await expect(
      core.call('hosts.update', { name: 'npu-a', patch: { name: 'npu-b' } }),
    ).rejects.toMatchObject({ code: 'CONFLICT', message: /running job/ });
    // other changes to it are not renames: allowed
    await expect(
      core.call('hosts.update', { name: 'npu-a', patch: { port: 2222 } }),
    ).resolves.toMatchObject({ port: 2222, hostname: '10.0.0.3' });
    await core.close();
  });
});
