import { spawn } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  statSync,
  writeFileSync,
  writeSync,
  closeSync,
} from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createCore } from '../../electron/core/api/core';
import { ArtifactStore } from '../../electron/core/db/artifacts';
import { amw } from '../support/cli';
import { tempDir } from '../support/temp';

const mode = (p: string) => statSync(p).mode & 0o777;

describe('data at rest is private (issue 17 item 6)', () => {
  it('a new data dir is 0700; database, WAL, backups and artifacts are 0600', async () => {
    const home = join(tempDir(), 'data');
    expect((await amw(['info'], { AMW_HOME: home })).code).toBe(0);
    expect(mode(home)).toBe(0o700);
    expect(mode(join(home, 'amw.db'))).toBe(0o600);
    const b = await amw(['db', 'backup', '--json'], { AMW_HOME: home });
    const { file } = JSON.parse(b.stdout) as { file: string };
    expect(mode(join(home, 'backups'))).toBe(0o700);
    expect(mode(file)).toBe(0o600);
    const core = createCore({ env: { AMW_HOME: home } as NodeJS.ProcessEnv });
    const db = new Database(join(home, 'amw.db'));
    try {
      const sha = new ArtifactStore(db, home).put('npu-smi output of host a', 'raw');
      expect(mode(join(home, 'artifacts'))).toBe(0o700);
      expect(mode(join(home, 'artifacts', sha.slice(0, 2)))).toBe(0o700);
      expect(mode(join(home, 'artifacts', sha.slice(0, 2), sha))).toBe(0o600);
      expect(existsSync(join(home, 'amw.db-wal'))).toBe(true);
      expect(mode(join(home, 'amw.db-wal'))).toBe(0o600);
      expect(mode(join(home, 'amw.db-shm'))).toBe(0o600);
    } finally {
      db.close();
      await core.close();
    }
  });

  it('an existing 0755 dir with a 0644 database is tightened at start', async () => {
    const home = join(tempDir(), 'data');
    mkdirSync(home, { mode: 0o755 });
    chmodSync(home, 0o755);
    expect((await amw(['info'], { AMW_HOME: home })).code).toBe(0);
    chmodSync(join(home, 'amw.db'), 0o644);
    chmodSync(home, 0o755);
    expect((await amw(['info'], { AMW_HOME: home })).code).toBe(0);
    expect(mode(home)).toBe(0o700);
    expect(mode(join(home, 'amw.db'))).toBe(0o600);
  });

  it('an explicit --db in a shared folder leaves that folder alone', async () => {
    const shared = tempDir();
    chmodSync(shared, 0o755);
    expect((await amw(['--db', join(shared, 'x.db'), 'info'])).code).toBe(0);
    expect(mode(shared)).toBe(0o755);
    expect(mode(join(shared, 'x.db'))).toBe(0o600);
  });
});

describe('a killed backup leaves nothing behind (issue 17 item 6)', () => {
  it('kill -9 during `amw db backup`: its .partial and -journal are swept at the next start', async () => {
    const home = join(tempDir(), 'data');
    expect((await amw(['info'], { AMW_HOME: home })).code).toBe(0);
    // a database big enough that the backup is still copying when it is killed
    const db = new Database(join(home, 'amw.db'));
    db.exec('CREATE TABLE IF NOT EXISTS zz_ballast (b BLOB)');
    const ins = db.prepare('INSERT INTO zz_ballast VALUES (randomblob(1048576))');
    db.transaction(() => {
      for (let i = 0; i < 200; i++) ins.run();
    })();
    db.close();
    const child = spawn(process.execPath, ['bin/amw.js', 'db', 'backup'], {
      env: { ...process.env, AMW_HOME: home },
      stdio: 'ignore',
    });
    const backups = join(home, 'backups');
    const partials = () =>
      existsSync(backups) ? readdirSync(backups).filter((f) => f.includes('.partial')) : [];
    await expect.poll(partials, { timeout: 15_000, interval: 5 }).not.toEqual([]);
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    expect(partials().length).toBeGreaterThan(0);
    // a leftover from an older version (no pid in the name) and one of a backup still running
    writeFileSync(join(backups, 'amw-old.db.partial'), 'x');
    const live = spawn('sleep', ['30']);
    writeFileSync(join(backups, `amw-live.db.${live.pid}.partial`), 'x');
    try {
      expect((await amw(['info'], { AMW_HOME: home })).code).toBe(0);
      expect(partials()).toEqual([`amw-live.db.${live.pid}.partial`]);
    } finally {
      live.kill();
    }
  }, 60_000);
});

/** Overwrites pages in the middle of a database file, as a failing disk would. */
function damagePages(file: string, from: number, count: number): void {
  const fd = openSync(file, 'r+');
  const garbage = Buffer.alloc(4096 * count, 0xa5);
  writeSync(fd, garbage, 0, garbage.length, 4096 * from);
  closeSync(fd);
}

describe('a damaged database is reported, not an unexpected error (issue 17 item 6)', () => {
  async function damagedHome(): Promise<string> {
    const home = join(tempDir(), 'data');
    const core = createCore({ env: { AMW_HOME: home } as NodeJS.ProcessEnv });
    for (let i = 0; i < 400; i++)
      await core.call('hosts.add', {
        name: `npu-${i}`,
        hostname: `10.0.${i >> 8}.${i & 255}`,
        port: 22,
        username: `user-with-a-long-name-${i}`,
        identityFile: `/home/porter/.ssh/id_ed25519_${'x'.repeat(100)}_${i}`,
      });
    await core.close(); // checkpoints the WAL into the file
    // damage one table's page that `info` and `hosts list` never read (where pages lie moves as
    // the schema grows): they still answer, and must say the file is damaged
    const raw = new Database(join(home, 'amw.db'), { readonly: true });
    const { pageno } = raw
      .prepare("SELECT pageno FROM dbstat WHERE name = 'audit_log' ORDER BY pageno LIMIT 1")
      .get() as { pageno: number };
    raw.close();
    damagePages(join(home, 'amw.db'), pageno - 1, 1);
    return home;
  }

  it('`db check` exits 1, names the damage and says how to restore', async () => {
    const home = await damagedHome();
    const r = await amw(['db', 'check'], { AMW_HOME: home });
    expect(r.code).toBe(1);
    expect(r.stderr).not.toMatch(/Unexpected error/);
    expect(r.stdout).toMatch(/Damage: /);
    expect(r.stdout).toContain(join(home, 'backups'));
    const json = await amw(['db', 'check', '--json'], { AMW_HOME: home });
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, restore: expect.any(String) });
  });

  it('a read that meets damaged pages names the file and the way out, not "Unexpected error"', async () => {
    const home = await damagedHome();
    const raw = new Database(join(home, 'amw.db'), { readonly: true });
    const leaves = raw
      .prepare("SELECT pageno FROM dbstat WHERE name = 'hosts' AND pagetype = 'leaf'")
      .all() as { pageno: number }[];
    raw.close();
    for (const { pageno } of leaves) damagePages(join(home, 'amw.db'), pageno - 1, 1);
    const list = await amw(['hosts', 'list'], { AMW_HOME: home });
    expect(list.code).toBe(2);
    expect(list.stderr).not.toMatch(/Unexpected error/);
    expect(list.stderr).toContain(join(home, 'amw.db'));
    expect(list.stderr).toMatch(/amw db check/);
  });

  it('`info` and `hosts list` warn that what they show comes from a damaged database', async () => {
    const home = await damagedHome();
    const info = await amw(['info'], { AMW_HOME: home });
    expect(info.stderr).toMatch(/warning: the database .* is damaged/);
    const list = await amw(['hosts', 'list'], { AMW_HOME: home });
    expect(list.stderr).toMatch(/warning: the database .* is damaged/);
    const clean = join(tempDir(), 'clean');
    expect((await amw(['info'], { AMW_HOME: clean })).stderr).toBe('');
  });

  it('a file damaged beyond opening: `db check` exits 1 with what to do', async () => {
    const home = await damagedHome();
    damagePages(join(home, 'amw.db'), 0, 1);
    const r = await amw(['db', 'check'], { AMW_HOME: home });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/damaged or is not a workbench database/);
    expect(r.stdout).toMatch(/move .*amw\.db away/);
  });
});
