import { request } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { amw, exitOf, firstLine, spawnAmw } from '../../tests/support/cli';
import { tempDir } from '../../tests/support/temp';
import { ArtifactStore } from '../core/db/artifacts';
import { openStore } from '../core/db/open';
import { loadMigrations } from '../core/db/migrate';
import { migrationsDir } from '../core/paths';

const LATEST = loadMigrations(migrationsDir()).length;

describe('amw CLI', () => {
  it('info --json reports the database it was pointed at with --db', async () => {
    const db = join(tempDir(), 'x.db');
    const r = await amw(['--db', db, 'info', '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ dbPath: db, schemaVersion: LATEST });
  });

  it('AMW_DB works like --db', async () => {
    const db = join(tempDir(), 'env.db');
    const r = await amw(['info', '--json'], { AMW_DB: db });
    expect(JSON.parse(r.stdout).dbPath).toBe(db);
  });

  it('refuses a newer database with exit 2, naming both versions, in en and zh-CN', async () => {
    const db = join(tempDir(), 'amw.db');
    openStore(db).db.close();
    const raw = new Database(db);
    raw.pragma(`user_version = ${LATEST + 2}`);
    raw.close();
    const en = await amw(['--db', db, 'info']);
    expect(en.code).toBe(2);
    expect(en.stderr).toMatch(new RegExp(`schema version ${LATEST + 2}.*only up to ${LATEST}`));
    expect(en.stderr).toContain(db);
    const zh = await amw(['--db', db, '--lang', 'zh-CN', 'info']);
    expect(zh.code).toBe(2);
    expect(zh.stderr).toContain(`结构版本为 ${LATEST + 2}`);
    expect(zh.stderr).toContain(`最高只支持 ${LATEST}`);
  });

  it('names a corrupt database and exits 2 without a stack trace', async () => {
    const db = join(tempDir(), 'amw.db');
    writeFileSync(db, 'garbage'.repeat(1000));
    const r = await amw(['--db', db, 'info']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(db);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('ends quietly when the reader closes the pipe early (`amw scan … | head`)', async () => {
    // a tree whose --json output is far larger than a pipe's buffer
    const dir = tempDir();
    for (let i = 0; i < 40; i++)
      writeFileSync(
        join(dir, `m${i}.py`),
        'import torch\n' + 'x = torch.randn(4).cuda()\n'.repeat(200),
      );
    const child = spawnAmw(['scan', dir, '--json']);
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr += String(d)));
    // read the first chunk, then close our end as `head` does
    await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
    child.stdout!.destroy();
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr).not.toMatch(/EPIPE|Unhandled|\n\s+at /);
    // the scan's own exit status (1: it found something), as if the whole output had been read
    const whole = await amw(['scan', dir, '--json']);
    expect(whole.code).toBe(1);
    expect(code).toBe(whole.code);
  });

  it('usage errors exit 2 with a hint', async () => {
    const r = await amw(['frobnicate']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('amw --help');
    const badLang = await amw(['--lang', 'fr', 'info']);
    expect(badLang.code).toBe(2);
  });

  it('help is localised', async () => {
    const zh = await amw(['--help'], { LANG: 'zh_CN.UTF-8' });
    expect(zh.code).toBe(0);
    expect(zh.stdout).toContain('用法');
    expect(zh.stdout).toContain('通过浏览器提供工作台界面');
    const en = await amw(['--lang', 'en', '--help'], { LANG: 'zh_CN.UTF-8' });
    expect(en.stdout).toContain('Usage:');
  });

  it('settings set validates through the contract', async () => {
    const db = join(tempDir(), 'amw.db');
    expect((await amw(['--db', db, 'settings', 'set', 'theme=dark'])).stdout).toContain(
      'theme=dark',
    );
    const bad = await amw(['--db', db, 'settings', 'set', 'theme=pink']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('theme');
    const unknown = await amw(['--db', db, 'settings', 'set', 'colour=red']);
    expect(unknown.code).toBe(2);
    const back = await amw(['--db', db, 'settings', 'get', '--json']);
    expect(JSON.parse(back.stdout)).toEqual({ language: 'en', theme: 'dark' });
  });

  it('db check exits 0 on a sound store and 1 when evidence is damaged', async () => {
    const dir = tempDir();
    const db = join(dir, 'amw.db');
    const { db: handle } = openStore(db);
    const store = new ArtifactStore(handle, dir);
    const sha = store.put('evidence', 'raw');
    handle.close();
    expect((await amw(['--db', db, 'db', 'check'])).code).toBe(0);
    writeFileSync(store.pathOf(sha), 'changed');
    const bad = await amw(['--db', db, 'db', 'check', '--json']);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout).artifacts.corrupt).toEqual([sha]);
    // in words: which file, holding what
    const said = await amw(['--db', db, 'db', 'check']);
    expect(said.stdout).toContain(`Damaged (its checksum differs): raw: ${store.pathOf(sha)}`);
  });

  it('db backup writes a backup and lists the job', async () => {
    const db = join(tempDir(), 'amw.db');
    const r = await amw(['--db', db, 'db', 'backup', '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).file).toMatch(/backups\/amw-.*\.db$/);
    const jobs = await amw(['--db', db, 'jobs', '--json']);
    expect(JSON.parse(jobs.stdout)[0]).toMatchObject({
      kind: 'maintenance.backup',
      status: 'succeeded',
    });
  });
});

describe('amw serve (spawned binary)', () => {
  it('prints one URL line with a token, answers 401 without it, and stops on SIGINT', async () => {
    const home = tempDir();
    const child = spawnAmw(['serve', '--port', '0'], { AMW_HOME: home });
    const done = exitOf(child);
    const line = await firstLine(child);
    // a private host name of its own (the cookie then reaches no other local server)
    expect(line).toMatch(/^http:\/\/amw-[a-z0-9]+\.localhost:\d+\/\?token=[\w-]{20,}$/);
    const url = new URL(line);
    // *.localhost is loopback: dial 127.0.0.1 and name the host, as a browser does
    const get = (path: string, headers: Record<string, string> = {}) =>
      new Promise<{ status: number; body: string; cookie?: string }>((resolve, reject) => {
        request(
          { host: '127.0.0.1', port: url.port, path, headers: { Host: url.host, ...headers } },
          (res) => {
            let body = '';
            res.on('data', (c: Buffer) => (body += String(c)));
            res.on('end', () =>
              resolve({
                status: res.statusCode ?? 0,
                body,
                cookie: res.headers['set-cookie']?.[0],
              }),
            );
          },
        )
          .on('error', reject)
          .end();
      });
    expect((await get('/')).status).toBe(401);
    const authed = await get(`/${url.search}`);
    expect(authed.status).toBe(302);
    const cookie = authed.cookie!.split(';')[0]!;
    const page = await get('/', { cookie });
    expect(page.status).toBe(200);
    expect(page.body).toContain('<div id="root"');
    child.kill('SIGINT');
    const result = await done;
    expect(result.code).toBe(0);
  });

  it('refuses to start on a newer database with exit 2', async () => {
    const db = join(tempDir(), 'amw.db');
    openStore(db).db.close();
    const raw = new Database(db);
    // one past what this build writes, whatever that is
    raw.pragma(`user_version = ${LATEST + 1}`);
    raw.close();
    const r = await exitOf(spawnAmw(['--db', db, 'serve']));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`schema version ${LATEST + 1}`);
  });
});

describe('amw parse npu-smi', () => {
  it('prints the documented JSON shape for a real sample', async () => {
    const r = await amw(['parse', 'npu-smi', 'tests/fixtures/npu-smi/info-s11.txt', '--json']);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ smiVersion: '25.0.rc1.1', warnings: [] });
    expect(out.devices[0]).toEqual({
      npu: 6,
      chip: 0,
      name: '310P3',
      health: 'OK',
      powerW: null,
      tempC: 55,
      aicorePct: 0,
      hbmUsedMB: null,
      hbmTotalMB: null,
      memUsedMB: 1175,
      memTotalMB: 44280,
      busId: '0000:83:00.0',
      phyId: null,
      logicId: 0,
    });
    expect(out.processes).toEqual([
      { npu: 6, chip: 1, pid: 293029, name: 'python3.11', memMB: 6612 },
    ]);
  });

  it('a missing file is a clear error with exit 2', async () => {
    const r = await amw(['parse', 'npu-smi', '/no/such/file']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('/no/such/file');
  });
});
