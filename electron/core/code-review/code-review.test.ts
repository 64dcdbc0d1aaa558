import { en } from '../../../tests/support/text';
import Database from 'better-sqlite3';
import { textIn } from '../i18n';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AmwError } from '../../../shared/errors';
import { amw } from '../../../tests/support/cli';
import { tempDir } from '../../../tests/support/temp';
import { createCore, type Core } from '../api/core';

const NANOGPT = join(__dirname, '../../../tests/fixtures/code/nanogpt-ddp');

let core: Core;
let project: string;

beforeEach(() => {
  core = createCore({ home: tempDir() });
  project = join(tempDir(), 'nanogpt');
  cpSync(NANOGPT, project, { recursive: true });
});
afterEach(() => core.close());

async function scan(sessionId?: number, mode: 'rewrite' | 'transfer' = 'rewrite') {
  const started = await core.call('code.scan', { path: project, mode, sessionId });
  const job = await core.jobs.wait(started.jobId);
  if (job.status !== 'succeeded') throw new Error(JSON.stringify(job.error));
  return {
    ...(job.result as { scanId: number; findings: number }),
    stageRunId: started.stageRunId,
  };
}

const failsWith = async (p: Promise<unknown>, code: string) => {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AmwError);
  expect((err as AmwError).code).toBe(code);
  return err as AmwError;
};

describe('code review: scan, review per file, patch, apply', () => {
  it('stores the scan: file list with counts, the original and the proposal of each file', async () => {
    const { scanId, findings } = await scan();
    const s = await core.call('code.get', { scanId });
    expect(s.findings).toHaveLength(findings);
    expect(s.counts.error + s.counts.warning + s.counts.info).toBe(findings);
    const train = s.fileList.find((f) => f.file === 'train.py')!;
    expect(train).toMatchObject({ hasText: true, changed: true, parses: true, review: 'pending' });
    expect(train.errors).toBeGreaterThan(5);
    const file = await core.call('code.file', { scanId, file: 'train.py' });
    expect(file.original).toBe(readFileSync(join(project, 'train.py'), 'utf8'));
    expect(file.proposed).toContain('import torch_npu');
    expect(file.proposed).toContain('init_process_group(backend="hccl")');
    // the diff the review opens with: replaying its blocks on the original gives the proposal
    const before = file.original.split('\n');
    const after = file.proposed.split('\n');
    const replayed: string[] = [];
    let at = 1;
    for (const [a0, a1, b0, b1] of file.diff) {
      replayed.push(...before.slice(at - 1, a0 - 1), ...after.slice(b0 - 1, b1 - 1));
      at = a1;
    }
    expect([...replayed, ...before.slice(at - 1)]).toEqual(after);
    expect(file.diff.length).toBeGreaterThan(5);
    expect((await core.call('code.scans', {}))[0]).toMatchObject({ id: scanId, mode: 'rewrite' });
    await failsWith(core.call('code.file', { scanId, file: '../../etc/passwd' }), 'NOT_FOUND');
  });

  it('keeps the files left out as not text with the scan: listed by code.get, their lines not counted', async () => {
    const before = await core.call('code.get', { scanId: (await scan()).scanId });
    expect(before.skipped).toEqual([]);
    // a compiled file named .py and a NUL-padded data file beside the sources
    writeFileSync(join(project, 'kernel.py'), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 0, 1, 0x0a]));
    writeFileSync(join(project, 'requirements-gpu.txt'), 'torch==2.1.0\n\0\0\0');
    const s = await core.call('code.get', { scanId: (await scan()).scanId });
    expect(s.skipped.sort()).toEqual(['kernel.py', 'requirements-gpu.txt']);
    expect(s.lines).toBe(before.lines);
    expect(s.fileList.map((f) => f.file)).not.toContain('kernel.py');
    expect((await core.call('code.scans', {}))[0]!.skipped).toHaveLength(2);
  });

  it('a scan’s warnings are messages, read in either language; one stored as text before still reads', async () => {
    writeFileSync(
      join(project, 'broken.py'),
      'import torch\ndef f(:\n    torch.cuda.synchronize()\n',
    );
    const { scanId } = await scan();
    const warnings = (await core.call('code.get', { scanId })).warnings;
    expect(warnings.map(textIn('zh-CN'))).toEqual([
      'broken.py：有 Python 语法错误，其中的发现可能不完整',
    ]);
    const db = new Database(core.location.dbPath);
    db.prepare('UPDATE code_scans SET warnings = ? WHERE id = ?').run(
      '["old.py: unreadable"]',
      scanId,
    );
    db.close();
    const old = (await core.call('code.get', { scanId })).warnings;
    expect(old.map(textIn('zh-CN'))).toEqual(['old.py: unreadable']);
  });

  it('a patch holds only reviewed files and applies with git apply; apply backs up then writes', async () => {
    const { scanId } = await scan();
    expect((await core.call('code.patch', { scanId })).files).toEqual([]);
    await failsWith(core.call('code.apply', { scanId }), 'VALIDATION');

    const file = await core.call('code.file', { scanId, file: 'train.py' });
    // the reviewer keeps every change but the AMP one, by hand
    const edited = file.proposed.replace('torch.npu.amp.GradScaler', 'torch.cuda.amp.GradScaler');
    expect(edited).not.toBe(file.proposed);
    const entry = await core.call('code.review', {
      scanId,
      file: 'train.py',
      review: 'edited',
      text: edited,
    });
    expect(entry.review).toBe('edited');
    const { patch, files } = await core.call('code.patch', { scanId });
    expect(files).toEqual(['train.py']);
    expect(patch).toContain('+import torch_npu');
    expect(patch).not.toContain('+scaler = torch.npu.amp.GradScaler');
    const patchFile = join(tempDir(), 'review.patch');
    writeFileSync(patchFile, patch);
    execFileSync('git', ['apply', '--check', patchFile], { cwd: project });

    const result = await core.call('code.apply', { scanId });
    expect(result.applied).toEqual(['train.py']);
    expect(readFileSync(join(project, 'train.py'), 'utf8')).toBe(edited);
    expect(readFileSync(join(result.backupDir, 'train.py'), 'utf8')).toBe(file.original);
    const after = await core.call('code.get', { scanId });
    expect(after.fileList.find((f) => f.file === 'train.py')!.appliedAt).not.toBeNull();
    // applied once: a second apply has nothing left, and the review is closed
    await failsWith(core.call('code.apply', { scanId }), 'VALIDATION');
    await failsWith(
      core.call('code.review', { scanId, file: 'train.py', review: 'rejected' }),
      'CONFLICT',
    );
  });

  it('an edit that lands back on the proposal or the original is recorded as that decision', async () => {
    const { scanId } = await scan();
    const file = await core.call('code.file', { scanId, file: 'train.py' });
    const asProposed = await core.call('code.review', {
      scanId,
      file: 'train.py',
      review: 'edited',
      text: file.proposed,
    });
    expect(asProposed.review).toBe('accepted');
    const asOriginal = await core.call('code.review', {
      scanId,
      file: 'train.py',
      review: 'edited',
      text: file.original,
    });
    expect(asOriginal.review).toBe('rejected');
    expect((await core.call('code.patch', { scanId })).files).toEqual([]);
  });

  it('changes rejected one by one are kept with the review, and dropped by a decision on the whole file', async () => {
    const { scanId } = await scan();
    const key = { scanId, file: 'train.py' };
    expect((await core.call('code.file', key)).rejected).toEqual([]);
    await core.call('code.review', { ...key, review: 'pending', rejected: ['3:3', '1:0', '3:3'] });
    const pending = await core.call('code.file', key);
    expect(pending).toMatchObject({ review: 'pending', rejected: ['3:3', '1:0'] });
    await core.call('code.review', { ...key, review: 'accepted', rejected: ['3:3'] });
    expect((await core.call('code.file', key)).rejected).toEqual([]);
    await expect(
      core.call('code.review', { ...key, review: 'pending', rejected: ['line 3'] }),
    ).rejects.toMatchObject({ code: 'VALIDATION' });
  });

  it('a file accepted change by change counts: partly accepted, in the patch, the apply, the scan summary and the timeline', async () => {
    const session = await core.call('sessions.create', { title: 'part way' });
    const { scanId } = await scan(session.id);
    const file = await core.call('code.file', { scanId, file: 'train.py' });
    expect(file.diff.length).toBeGreaterThan(1);
    // take only the first proposed block, as the review does when one change is accepted
    const [a0, a1, b0, b1] = file.diff[0]!;
    const o = file.original.split('\n');
    const p = file.proposed.split('\n');
    const text = [...o.slice(0, a0 - 1), ...p.slice(b0 - 1, b1 - 1), ...o.slice(a1 - 1)].join('\n');
    const entry = await core.call('code.review', {
      scanId,
      file: 'train.py',
      review: 'edited',
      text,
    });
    expect(entry.review).toBe('edited');
    expect(entry.changes).toEqual({ accepted: 1, total: file.diff.length });
    const s = await core.call('code.get', { scanId });
    expect(s.fileList.find((f) => f.file === 'train.py')!.changes?.accepted).toBe(1);
    expect(s.reviewed).toMatchObject({ edited: 1, accepted: 0 });
    // the session's timeline says "1 of n", not "accepted with changes"
    const reviewed = (await core.call('sessions.timeline', { id: session.id })).filter(
      (e) => e.kind === 'code-review',
    );
    expect(reviewed).toMatchObject([
      { file: 'train.py', partial: { accepted: 1, total: file.diff.length } },
    ]);
    // the reviewed text lost from the disk: the timeline still reads, without the count
    const raw = new Database(core.location.dbPath);
    const { sha } = raw
      .prepare(`SELECT reviewed_sha256 AS sha FROM code_files WHERE file = 'train.py'`)
      .get() as { sha: string };
    raw.close();
    const stored = join(core.location.dataDir, 'artifacts', sha.slice(0, 2), sha);
    const kept = readFileSync(stored);
    rmSync(stored);
    const without = await core.call('sessions.timeline', { id: session.id });
    expect(without.find((e) => e.kind === 'code-review')).not.toHaveProperty('partial');
    writeFileSync(stored, kept);
    const patch = await core.call('code.patch', { scanId });
    expect(patch.files).toEqual(['train.py']);
    expect(patch.patch).toContain(p[b0 - 1]!);
    expect((await core.call('code.apply', { scanId })).applied).toEqual(['train.py']);
    expect(readFileSync(join(project, 'train.py'), 'utf8')).toBe(text);
    // applied, it still counts as taken in part; the timeline has the applying as its own event
    expect((await core.call('code.get', { scanId })).reviewed).toMatchObject({
      applied: 1,
      edited: 0,
      inPart: 1,
    });
    const after = (await core.call('sessions.timeline', { id: session.id })).filter(
      (e) => e.kind === 'code-review',
    );
    expect(after).toHaveLength(2);
    expect(after).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ review: 'edited', partial: expect.anything() }),
        expect.objectContaining({
          review: 'applied',
          partial: { accepted: 1, total: file.diff.length },
        }),
      ]),
    );
  });

  it('refuses to apply over a file changed since the scan, writing nothing', async () => {
    const { scanId } = await scan();
    await core.call('code.review', { scanId, file: 'train.py', review: 'accepted' });
    const mine = `${readFileSync(join(project, 'train.py'), 'utf8')}# my own edit\n`;
    writeFileSync(join(project, 'train.py'), mine);
    const err = await failsWith(core.call('code.apply', { scanId }), 'CONFLICT');
    expect(err.message).toContain('train.py');
    expect(readFileSync(join(project, 'train.py'), 'utf8')).toBe(mine);
    // after a new scan the same review works again
    const again = await scan();
    await core.call('code.review', { scanId: again.scanId, file: 'train.py', review: 'accepted' });
    expect((await core.call('code.apply', { scanId: again.scanId })).applied).toEqual(['train.py']);
    expect(readFileSync(join(project, 'train.py'), 'utf8')).toContain('# my own edit');
  });

  it('inside a session it is the code stage: one check per rule, findings go down across scans', async () => {
    const session = await core.call('sessions.create', { title: 'port nanoGPT' });
    const first = await scan(session.id);
    expect(first.stageRunId).not.toBeNull();
    let s = await core.call('sessions.get', { id: session.id });
    const run = s.runs.find((r) => r.stage === 'code')!;
    expect(run.status).toBe('fail');
    expect(run.checks.map((c) => c.id)).toContain('dist.nccl');
    const nccl = run.checks.find((c) => c.id === 'dist.nccl')!;
    expect(nccl).toMatchObject({ status: 'fail', evidence: { count: 1 } });
    expect(en(nccl.title)).toBe('NCCL backend');

    await core.call('code.review', { scanId: first.scanId, file: 'train.py', review: 'accepted' });
    await core.call('code.apply', { scanId: first.scanId });
    const second = await scan(session.id);
    expect(second.findings).toBeLessThan(first.findings);
    s = await core.call('sessions.get', { id: session.id });
    const latest = s.runs.find((r) => r.stage === 'code')!;
    expect(latest.id).toBe(second.stageRunId);
    expect(latest.checks.map((c) => c.id)).not.toContain('dist.nccl');
    const scans = await core.call('code.scans', { sessionId: session.id });
    expect(scans.map((x) => x.id)).toEqual([second.scanId, first.scanId]);
    expect(scans[0]!.counts.error).toBeLessThan(scans[1]!.counts.error);
  });

  it('compared with the session before, a rule no longer found is improved, not "not run"', async () => {
    const before = await core.call('sessions.create', { title: 'first try' });
    const first = await scan(before.id);
    await core.call('code.review', { scanId: first.scanId, file: 'train.py', review: 'accepted' });
    await core.call('code.apply', { scanId: first.scanId });
    const after = await core.call('sessions.create', { title: 'after the port' });
    await scan(after.id);
    const rows = await core.call('sessions.compare', { a: before.id, b: after.id });
    expect(rows.find((r) => r.checkId === 'dist.nccl')).toMatchObject({
      a: 'fail',
      b: 'pass',
      change: 'improved',
    });
    expect(rows.some((r) => r.change === 'gone')).toBe(false);
  });

  it('amw scan --session stores the scan as the session code stage, reviewable in the app', async () => {
    const home = tempDir();
    const env = { AMW_HOME: home };
    const c = createCore({ home });
    const id = (await c.call('sessions.create', { title: 'cli port' })).id;
    await c.close();
    const r = await amw(['scan', project, '--session', String(id), '--json'], env);
    expect(r.code).toBe(1); // errors found
    expect(r.stderr).toContain(`session ${id}`);
    const after = createCore({ home });
    try {
      const scans = await after.call('code.scans', { sessionId: id });
      expect(scans).toHaveLength(1);
      expect(scans[0]!.counts.error).toBe(
        (JSON.parse(r.stdout) as { findings: { severity: string }[] }).findings.filter(
          (f) => f.severity === 'error',
        ).length,
      );
      const s = await after.call('sessions.get', { id });
      expect(s.runs.find((x) => x.stage === 'code')?.status).toBe('fail');
    } finally {
      await after.close();
    }
    expect((await amw(['scan', project, '--session', 'x'], env)).code).toBe(2);
  });

  it('amw scan --session prints what a plain scan prints (read back from the one stored scan), in the language asked, and the same patch', async () => {
    const home = tempDir();
    const env = { AMW_HOME: home };
    const c = createCore({ home });
    const id = (await c.call('sessions.create', { title: 'cli port' })).id;
    // the stored messages are in the settings' language; the CLI prints in its own
    await c.call('settings.set', { language: 'zh-CN' });
    await c.close();
    const out = tempDir();
    for (const lang of ['en', 'zh-CN']) {
      const plain = await amw(
        ['--lang', lang, 'scan', project, '--json', '--patch', join(out, `plain-${lang}`)],
        env,
      );
      const stored = await amw(
        [
          ...['--lang', lang, 'scan', project, '--json'],
          ...['--session', String(id), '--patch', join(out, `stored-${lang}`)],
        ],
        env,
      );
      expect(stored.code).toBe(plain.code);
      expect(stored.stdout).toBe(plain.stdout);
      expect(readFileSync(join(out, `stored-${lang}`), 'utf8')).toBe(
        readFileSync(join(out, `plain-${lang}`), 'utf8'),
      );
    }
    const after = createCore({ home });
    try {
      // one stored scan per --session run: the folder was not scanned a second time to print
      expect(await after.call('code.scans', { sessionId: id })).toHaveLength(2);
    } finally {
      await after.close();
    }
  });

  it('a plain amw scan opens no database: nothing is created or locked', async () => {
    const home = tempDir();
    const db = join(home, 'amw.db');
    const r = await amw(['--db', db, 'scan', project, '--json'], { AMW_HOME: home });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).findings.length).toBeGreaterThan(5);
    expect(existsSync(db)).toBe(false);
  });

  it('a folder that does not exist is refused before any job starts', async () => {
    await failsWith(core.call('code.scan', { path: join(project, 'nope') }), 'NOT_FOUND');
    await failsWith(core.call('code.scan', { path: 'relative/path' }), 'NOT_FOUND');
    expect(existsSync(project)).toBe(true);
  });

  it('a folder typed as ~/… is read from the home folder, as a shell would (the form has none)', async () => {
    const home = tempDir();
    cpSync(NANOGPT, join(home, 'nanogpt'), { recursive: true });
    const before = process.env.HOME;
    process.env.HOME = home;
    try {
      const started = await core.call('code.scan', { path: '~/nanogpt' });
      const job = await core.jobs.wait(started.jobId);
      expect(job.status).toBe('succeeded');
      const { scanId } = job.result as { scanId: number };
      expect((await core.call('code.get', { scanId })).root).toBe(join(home, 'nanogpt'));
      // a project's code location typed so too: its session's code stage scans it
      await core.call('projects.create', { name: 'tilde', codeLocation: '~/nanogpt' });
      const session = await core.call('sessions.create', { project: 'tilde' });
      const staged = await core.call('code.scan', { path: '.', sessionId: session.id });
      expect((await core.jobs.wait(staged.jobId)).status).toBe('succeeded');
      const [latest] = await core.call('code.scans', { sessionId: session.id });
      expect(latest!.root).toBe(join(home, 'nanogpt'));
    } finally {
      process.env.HOME = before;
    }
  });
});
