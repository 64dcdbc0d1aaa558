import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gitSync } from '../../electron/core/git/safe-git';
import { gitCommit } from '../../electron/core/sessions/repository';
import { amw } from '../support/cli';
import { tempDir } from '../support/temp';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-C', cwd, ...args], {
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'a',
      GIT_AUTHOR_EMAIL: 'a@b',
      GIT_COMMITTER_NAME: 'a',
      GIT_COMMITTER_EMAIL: 'a@b',
    },
  });

/** A checkout whose own config runs a command: fsmonitor, hooks, a pager and an external diff. */
function armedRepo(): { repo: string; marker: string } {
  const dir = tempDir();
  const repo = join(dir, 'repo');
  const marker = join(dir, 'pwned');
  mkdirSync(repo);
  git(repo, 'init', '-q');
  writeFileSync(join(repo, 'train.py'), 'import torch\nx = torch.randn(2).cuda()\n');
  writeFileSync(join(repo, '.gitignore'), 'ignored/\n');
  mkdirSync(join(repo, 'ignored'));
  writeFileSync(join(repo, 'ignored', 'skip.py'), 'import torch\ntorch.cuda.synchronize()\n');
  git(repo, 'add', '.');
  git(repo, 'commit', '-qm', 'init');
  const hook = join(dir, 'evil.sh');
  writeFileSync(hook, `#!/bin/sh\ntouch ${marker}\nexit 1\n`);
  chmodSync(hook, 0o755);
  mkdirSync(join(dir, 'hooks'));
  for (const h of ['post-index-change', 'pre-commit', 'reference-transaction'])
    writeFileSync(join(dir, 'hooks', h), `#!/bin/sh\ntouch ${marker}\n`, { mode: 0o755 });
  for (const [k, v] of [
    ['core.fsmonitor', hook],
    ['core.hooksPath', join(dir, 'hooks')],
    ['core.pager', hook],
    ['diff.external', hook],
    ['core.sshCommand', hook],
  ])
    git(repo, 'config', k!, v!);
  return { repo, marker };
}

describe('git on a scanned checkout runs nothing its config names (issue 17 item 2)', () => {
  it('the attack is real: plain `git ls-files` runs the repository fsmonitor command', () => {
    const { repo, marker } = armedRepo();
    try {
      git(repo, 'ls-files', '-co', '--exclude-standard');
    } catch {
      // the hook exits 1; what matters is that it ran
    }
    expect(existsSync(marker)).toBe(true);
  });

  it('`amw scan` of that checkout runs none of it, and still honours .gitignore', async () => {
    const { repo, marker } = armedRepo();
    const r = await amw(['scan', repo, '--json']);
    expect(existsSync(marker)).toBe(false);
    const out = JSON.parse(r.stdout) as { findings: { file: string }[] };
    const files = new Set(out.findings.map((f) => f.file));
    expect(files.has('train.py')).toBe(true);
    expect(files.has('ignored/skip.py')).toBe(false); // git's listing was used, not a walk
  });

  it('the session commit lookup and any other call go through the same runner', () => {
    const { repo, marker } = armedRepo();
    expect(gitCommit(repo)).toMatch(/^[0-9a-f]{40}$/);
    for (const args of [
      ['status', '--porcelain'],
      ['diff', 'HEAD'],
      ['log', '-1', '-p'],
    ])
      gitSync(repo, args);
    expect(existsSync(marker)).toBe(false);
  });

  it('inherited GIT_DIR cannot point git at another repository', () => {
    const a = armedRepo();
    const b = armedRepo();
    rmSync(b.marker, { force: true });
    const head = gitSync(a.repo, ['rev-parse', 'HEAD'], {
      env: { ...process.env, GIT_DIR: join(b.repo, '.git') },
    }).trim();
    expect(head).toBe(git(a.repo, 'rev-parse', 'HEAD').trim());
  });
});
