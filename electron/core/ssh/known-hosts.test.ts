import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../../tests/support/temp';
import { fingerprint, KnownHosts, keyTypeOf, patternsMatch, type HostKey } from './known-hosts';

/** A real host key made by ssh-keygen, with the fingerprint ssh-keygen itself reports. */
function realKey(dir: string, name: string): HostKey & { sshKeygenFp: string; pubLine: string } {
  const file = join(dir, name);
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', file]);
  const pubLine = readFileSync(`${file}.pub`, 'utf8').trim();
  const [type, b64] = pubLine.split(' ');
  const sshKeygenFp = execFileSync('ssh-keygen', ['-lf', `${file}.pub`], {
    encoding: 'utf8',
  }).split(' ')[1]!;
  return { type: type!, blob: Buffer.from(b64!, 'base64'), sshKeygenFp, pubLine };
}

describe('known_hosts', () => {
  it('fingerprints exactly as ssh-keygen -l does, and reads the type from the blob', () => {
    const key = realKey(tempDir(), 'k');
    expect(fingerprint(key.blob)).toBe(key.sshKeygenFp);
    expect(keyTypeOf(key.blob)).toBe('ssh-ed25519');
  });

  it('unknown → add (hashed) → known; a different key → mismatch naming the line', () => {
    const dir = tempDir();
    const kh = new KnownHosts(join(dir, 'known_hosts'));
    const key = realKey(dir, 'a');
    expect(kh.verify('10.1.2.3', 2222, key).status).toBe('unknown');
    kh.add('10.1.2.3', 2222, key);
    expect(readFileSync(kh.appFile, 'utf8')).toMatch(/^\|1\|/); // hashed, like HashKnownHosts
    expect(readFileSync(kh.appFile, 'utf8')).not.toContain('10.1.2.3');
    expect(kh.verify('10.1.2.3', 2222, key).status).toBe('known');
    expect(kh.verify('10.1.2.3', 22, key).status).toBe('unknown'); // other port, other host
    const other = realKey(dir, 'b');
    const v = kh.verify('10.1.2.3', 2222, other);
    expect(v.status).toBe('mismatch');
    if (v.status === 'mismatch') expect(v.entry).toMatchObject({ file: kh.appFile, line: 1 });
  });

  it('reads entries hashed by ssh-keygen -H and plain [host]:port entries from the user file', () => {
    const dir = tempDir();
    const key = realKey(dir, 'h');
    const userFile = join(dir, 'user_known_hosts');
    writeFileSync(
      userFile,
      `# comment\n[gpu-box.example]:2200,10.0.0.9 ${key.pubLine}\nnpu-a ${key.pubLine}\n`,
    );
    execFileSync('ssh-keygen', ['-q', '-H', '-f', userFile]);
    expect(readFileSync(userFile, 'utf8')).not.toContain('npu-a');
    const kh = new KnownHosts(join(dir, 'app_known_hosts'), [userFile]);
    expect(kh.verify('npu-a', 22, key).status).toBe('known');
    expect(kh.verify('gpu-box.example', 2200, key).status).toBe('known');
    expect(kh.verify('10.0.0.9', 22, key).status).toBe('known');
    expect(kh.verify('npu-b', 22, key).status).toBe('unknown');
  });

  it('honours wildcards, negation and @revoked', () => {
    expect(patternsMatch('*.cluster,!bad.cluster', 'n1.cluster', 22)).toBe(true);
    expect(patternsMatch('*.cluster,!bad.cluster', 'bad.cluster', 22)).toBe(false);
    expect(patternsMatch('npu-?', 'npu-7', 22)).toBe(true);
    const dir = tempDir();
    const key = realKey(dir, 'r');
    const file = join(dir, 'kh');
    writeFileSync(file, `@revoked * ${key.pubLine}\n`);
    expect(new KnownHosts(file).verify('anything', 22, key).status).toBe('revoked');
  });

  it('skips garbage lines instead of failing', () => {
    const dir = tempDir();
    const file = join(dir, 'kh');
    writeFileSync(file, 'garbage\n\n|1|broken\nhost ssh-ed25519 !!!notbase64\n');
    const key = realKey(dir, 'g');
    expect(new KnownHosts(file).verify('host', 22, key).status).toBe('unknown');
  });
});
