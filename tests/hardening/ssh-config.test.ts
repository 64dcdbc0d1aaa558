import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readSshConfig, readSshConfigWithWarnings } from '../../electron/core/ssh/ssh-config';
import { wildcardMatch } from '../../electron/core/ssh/glob';
import { amw } from '../support/cli';
import { tempDir } from '../support/temp';

describe('ssh_config import never runs what the file says (issue 17 item 1)', () => {
  it('Match exec is never run, by the CLI dry run', async () => {
    const dir = tempDir();
    const marker = join(dir, 'pwned');
    const file = join(dir, 'config');
    writeFileSync(
      file,
      `Match exec "touch ${marker}"\n  User evil\n\nHost gpu-a\n  HostName 10.0.0.1\nHost gpu-b\n  HostName 10.0.0.2\n`,
    );
    const r = await amw([
      '--db',
      join(dir, 'amw.db'),
      'hosts',
      'import-ssh-config',
      file,
      '--dry-run',
    ]);
    expect(r.code).toBe(0);
    expect(existsSync(marker)).toBe(false);
    expect(r.stdout).toContain('gpu-a');
    expect(r.stdout).not.toContain('evil');
    expect(r.stderr).toMatch(/Match exec is never run/);
  });

  it('Match exec is never run through the RPC either (hosts.importSshConfig)', async () => {
    const { createCore } = await import('../../electron/core/api/core');
    const dir = tempDir();
    const marker = join(dir, 'pwned');
    const file = join(dir, 'config');
    writeFileSync(file, `Host a\n  HostName h\nMatch host h exec "touch ${marker}"\n  Port 2222\n`);
    const core = createCore({ db: join(dir, 'amw.db'), env: {} });
    try {
      const res = await core.dispatch('hosts.importSshConfig', { file }, { transport: 'ws' });
      expect(res.ok).toBe(true);
      expect(existsSync(marker)).toBe(false);
      const list = await core.call('hosts.list', {});
      expect(list.map((h) => [h.name, h.port])).toEqual([['a', 22]]);
      // a FIFO given to the RPC (it froze the whole serve process): refused at once, typed
      const fifo = join(dir, 'fifo');
      execFileSync('mkfifo', [fifo]);
      const r = await core.dispatch('hosts.importSshConfig', { file: fifo }, { transport: 'ws' });
      expect(r).toMatchObject({ ok: false, error: { code: 'SSH_CONFIG' } });
    } finally {
      await core.close();
    }
  });

  it('no name lookup is run for CanonicalizeHostName either', () => {
    const dir = tempDir();
    const file = join(dir, 'config');
    writeFileSync(
      file,
      'CanonicalizeHostName yes\nCanonicalDomains example.invalid\nHost a\n  User u\n',
    );
    expect(readSshConfig(file)).toMatchObject([{ alias: 'a', hostname: 'a', user: 'u' }]);
  });

  it('still resolves Host patterns, negation, Match host/user/all the way ssh(1) does', () => {
    const dir = tempDir();
    const file = join(dir, 'config');
    writeFileSync(
      file,
      [
        'Host gpu-* !gpu-old',
        '  User porter',
        'Host gpu-a',
        '  HostName 10.0.0.1',
        'Host gpu-old',
        '  HostName 10.0.0.9',
        'Match host 10.0.0.1',
        '  Port 2200',
        'Match all',
        '  IdentityFile ~/.ssh/id_all',
        'Host *',
        '  User fallback',
      ].join('\n'),
    );
    const hosts = readSshConfig(file);
    expect(hosts.find((h) => h.alias === 'gpu-a')).toMatchObject({
      hostname: '10.0.0.1',
      user: 'porter',
      port: 2200,
      identityFiles: ['~/.ssh/id_all'],
    });
    expect(hosts.find((h) => h.alias === 'gpu-old')).toMatchObject({ user: 'fallback', port: 22 });
  });
});

describe('ssh_config import is bounded (issue 17 item 3)', () => {
  it('8,000 hosts with patterns and Includes resolve (linear; the figure is printed)', () => {
    const dir = tempDir();
    const file = join(dir, 'config');
    const lines: string[] = ['Host *', '  ServerAliveInterval 30'];
    for (let i = 0; i < 8000; i++)
      lines.push(`Host node-${i}`, `  HostName 10.1.${i >> 8}.${i & 255}`, '  User u');
    lines.push('Host node-*', '  Port 2200');
    writeFileSync(file, lines.join('\n'));
    const t0 = performance.now();
    const hosts = readSshConfig(file);
    console.log(`ssh_config: 8000 hosts resolved in ${Math.round(performance.now() - t0)} ms`);
    expect(hosts).toHaveLength(8000);
    expect(hosts[7999]).toMatchObject({ hostname: '10.1.31.63', port: 2200, user: 'u' });
  });

  it('an Include glob with many * against long names matches without backtracking', () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'd'));
    writeFileSync(join(dir, 'd', `${'a'.repeat(200)}`), 'Host inc\n  HostName 1.2.3.4\n');
    const file = join(dir, 'config');
    writeFileSync(file, `Include ${join(dir, 'd')}/${'*a'.repeat(40)}*b\nHost top\n`);
    // the old regex (.*a){40}.*b against 200 a's does not finish in minutes
    expect(readSshConfig(file).map((h) => h.alias)).toEqual(['top']);
    expect(wildcardMatch('*a'.repeat(40) + '*', 'a'.repeat(200))).toBe(true);
  });

  it('an Include of a FIFO or a device is refused, never read (no block)', () => {
    const dir = tempDir();
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const file = join(dir, 'config');
    writeFileSync(file, `Include ${fifo}\nInclude /dev/zero\nHost ok\n`);
    const r = readSshConfigWithWarnings(file);
    expect(r.hosts.map((h) => h.alias)).toEqual(['ok']);
    expect(r.warnings.join('\n')).toMatch(/fifo skipped: not a regular file/);
    expect(r.warnings.join('\n')).toMatch(/\/dev\/zero skipped: not a regular file/);
    // and given directly, as the file to import
    expect(() => readSshConfig(fifo)).toThrow(/not a regular file/);
  });

  it('the CLI given a FIFO ends at once with an error instead of blocking', async () => {
    const dir = tempDir();
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const r = await amw([
      '--db',
      join(dir, 'amw.db'),
      'hosts',
      'import-ssh-config',
      fifo,
      '--dry-run',
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/not a regular file/);
  });

  it('the built CLI exits on SIGTERM even while a command is still working', async () => {
    const dir = tempDir();
    // stdin left open: `parse npu-smi -` waits for input, as a stuck read of a FIFO did
    const child = spawn(
      process.execPath,
      [join(process.cwd(), 'bin', 'amw.js'), '--db', join(dir, 'amw.db'), 'parse', 'npu-smi', '-'],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let early: number | null = null;
    child.on('exit', (c) => (early ??= c));
    await new Promise((r) => setTimeout(r, 800));
    expect(early).toBeNull(); // still waiting, not failed
    child.kill('SIGTERM');
    const code = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => resolve(-1), 8000);
      child.on('exit', (c, sig) => {
        clearTimeout(timer);
        resolve(c ?? (sig ? 143 : null));
      });
    });
    child.stdin.end();
    expect(code).toBe(143);
  });
});

describe('ssh_config warnings quote the file safely (found by the fuzz suite)', () => {
  it('an unknown Match criterion with escape bytes is escaped in the warning', () => {
    const dir = tempDir();
    const file = join(dir, 'config');
    writeFileSync(file, 'Match h\u001b[2J\u001b]0;x\u0007ost a\n  Port 1\nHost a\n');
    const r = readSshConfigWithWarnings(file);
    expect(r.warnings).toHaveLength(1);
    // eslint-disable-next-line no-control-regex
    expect(r.warnings[0]).not.toMatch(/[\u0000-\u001f]/);
    expect(r.warnings[0]).toContain('\\x1b[2J');
  });
});

describe('ssh_config lines the import does not understand are named (issue 17 item 8)', () => {
  it('an unknown keyword is a warning naming its line; IgnoreUnknown is honoured', () => {
    const dir = tempDir();
    const file = join(dir, 'config');
    writeFileSync(
      file,
      'IgnoreUnknown UseKeychainX,Foo*\nHost a\n  HostName h\n  Bogus yes\n  FooBar 1\n  UseKeychainX yes\n  Port=2200\n',
    );
    const r = readSshConfigWithWarnings(file);
    expect(r.warnings).toEqual(['line 4: unknown ssh_config keyword "bogus", ignored']);
    expect(r.hosts).toMatchObject([{ alias: 'a', hostname: 'h', port: 2200 }]);
  });
});
