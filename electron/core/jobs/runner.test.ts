import { spawn } from 'node:child_process';
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { JobRecord } from '../../../shared/api';
import { tempDir } from '../../../tests/support/temp';
import { fillDatabase } from '../../../tests/support/fill';
import { ArtifactStore } from '../db/artifacts';
import { openStore } from '../db/open';
import { EventBus } from '../events';
import { backupDatabase } from '../maintenance/backup';
import { checkStore } from '../maintenance/check';
import { JobRunner } from './runner';

function setup() {
  const dir = tempDir();
  const { db } = openStore(join(dir, 'amw.db'));
  const bus = new EventBus();
  const events: JobRecord[] = [];
  bus.on('job.updated', (j) => events.push(j));
  return { dir, db, bus, events, runner: new JobRunner(db, bus) };
}

describe('job runner with a real database backup', () => {
  it('streams increasing progress and ends with a restorable backup', async () => {
    const { dir, db, runner, events } = setup();
    fillDatabase(db, 40);
    const job = runner.start('maintenance.backup', {}, (ctx) =>
      backupDatabase(db, dir, ctx, { pagesPerStep: 4 }),
    );
    expect(job.status).toBe('running');
    const done = await runner.wait(job.id);
    expect(done.status).toBe('succeeded');
    const fractions = events
      .filter((e) => e.id === job.id && e.progress !== null)
      .map((e) => e.progress!);
    expect(fractions.length).toBeGreaterThan(2);
    expect([...fractions].sort((a, b) => a - b)).toEqual(fractions);
    expect(fractions.at(-1)).toBe(1);

    const { file } = done.result as { file: string };
    // the job's last message says where the backup is
    expect(done.message).toEqual({ key: 'backupWritten', params: { file } });
    const copy = openStore(file).db;
    const n = copy.prepare('SELECT count(*) AS n FROM audit_log').get() as { n: number };
    expect(n.n).toBe(40 * 1024);
    copy.close();
    db.close();
  });

  it('cancels mid-way: status cancelled, no backup file left behind', async () => {
    const { dir, db, bus, runner } = setup();
    fillDatabase(db, 40);
    // cancelled as its first progress is reported (from inside the copy, whose next step then
    // stops), not after a timer: on a loaded machine a polling timer fired only after the backup
    // had finished, and later reports are held back for an interval the whole copy can fit in
    let id = '';
    bus.on('job.updated', (j) => {
      if (j.id === id && j.status === 'running' && j.progress !== null) runner.cancel(id);
    });
    const job = runner.start('maintenance.backup', {}, (ctx) =>
      backupDatabase(db, dir, ctx, { pagesPerStep: 2 }),
    );
    id = job.id;
    const done = await runner.wait(job.id);
    expect(done.status).toBe('cancelled');
    expect(done.error?.code).toBe('CANCELLED');
    expect(done.progress).toBeLessThan(1);
    expect(readdirSync(join(dir, 'backups'))).toEqual([]);
    db.close();
  });

  it('persists: a job of a dead process reads as interrupted, a live one is left alone', async () => {
    const { dir, db, bus } = setup();
    const insert = db.prepare(
      `INSERT INTO jobs (id, kind, status, created_at, owner_pid) VALUES (?, 'x', 'running', ?, ?)`,
    );
    const dead = spawn(process.execPath, ['-e', '0']);
    await new Promise((r) => dead.on('exit', r));
    const alive = spawn(process.execPath, ['-e', 'setTimeout(()=>{}, 30000)']);
    try {
      insert.run('dead-owner', new Date().toISOString(), dead.pid);
      insert.run('live-owner', new Date().toISOString(), alive.pid);
      const runner = new JobRunner(db, bus);
      expect(runner.get('dead-owner').status).toBe('interrupted');
      expect(runner.get('dead-owner').finishedAt).not.toBeNull();
      expect(runner.get('live-owner').status).toBe('running');
    } finally {
      alive.kill();
    }
    expect(existsSync(join(dir, 'amw.db'))).toBe(true);
    db.close();
  });

  it('records a failing body as failed with its error', async () => {
    const { db, runner } = setup();
    const job = runner.start('x', {}, () => Promise.reject(new Error('disk full')));
    const done = await runner.wait(job.id);
    expect(done.status).toBe('failed');
    expect(done.error).toEqual({ code: 'INTERNAL', message: 'disk full' });
    db.close();
  });
});

describe('store check', () => {
  it('passes on a sound store, then finds a damaged and a missing evidence file', async () => {
    const { dir, db, runner } = setup();
    const artifacts = new ArtifactStore(db, dir);
    const a = artifacts.put('npu-smi output one', 'raw');
    const b = artifacts.put('npu-smi output two', 'raw');
    artifacts.put('npu-smi output three', 'raw');

    const first = await runner.wait(
      runner.start('c', {}, (ctx) => checkStore(db, artifacts, ctx)).id,
    );
    expect(first.result).toMatchObject({
      ok: true,
      artifacts: { checked: 3, missing: [], corrupt: [] },
    });

    writeFileSync(artifacts.pathOf(a), 'tampered');
    rmSync(artifacts.pathOf(b));
    const second = await runner.wait(
      runner.start('c', {}, (ctx) => checkStore(db, artifacts, ctx)).id,
    );
    expect(second.result).toMatchObject({ ok: false, artifacts: { missing: [b], corrupt: [a] } });
    db.close();
  });
});
