import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KnownHosts, patternsMatch } from '../../electron/core/ssh/known-hosts';
import { tempDir } from '../support/temp';

function newKey(dir: string, name: string) {
  const file = join(dir, name);
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', file]);
  const [type, b64] = readFileSync(`${file}.pub`, 'utf8').split(' ');
  return { type: type!, blob: Buffer.from(b64!, 'base64'), line: `${type} ${b64}` };
}

describe('known_hosts [host]:port lines, not hashed (issue 17 item 7)', () => {
  it('a plain [name]:port and [ip]:port line is read and matched, as ssh-keygen -F finds it', () => {
    const dir = tempDir();
    const key = newKey(dir, 'k');
    const other = newKey(dir, 'o');
    const file = join(dir, 'known_hosts');
    // exactly what ssh(1) writes for non-22 ports with HashKnownHosts no
    writeFileSync(
      file,
      `[gpu-box.example]:2200 ${key.line}\n[10.0.0.9]:2200 ${key.line}\n[npu-*]:2222 ${key.line}\n`,
    );
    // the file is left plain: ssh-keygen itself finds these entries in it
    for (const h of ['[gpu-box.example]:2200', '[10.0.0.9]:2200'])
      expect(execFileSync('ssh-keygen', ['-F', h, '-f', file], { encoding: 'utf8' })).toContain(h);

    const kh = new KnownHosts(join(dir, 'app'), [file]);
    expect(kh.verify('gpu-box.example', 2200, key).status).toBe('known');
    expect(kh.verify('10.0.0.9', 2200, key).status).toBe('known');
    expect(kh.verify('10.0.0.9', 2200, other).status).toBe('mismatch');
    expect(kh.verify('npu-7', 2222, key).status).toBe('known');
    // the port is part of the name: the same host on 22 or another port is not this entry
    expect(kh.verify('10.0.0.9', 22, key).status).toBe('unknown');
    expect(kh.verify('10.0.0.9', 2201, key).status).toBe('unknown');
  });

  it('pattern characters of regular expressions are literal', () => {
    expect(patternsMatch('[a+b]:2200', 'a+b', 2200)).toBe(true);
    expect(patternsMatch('[a.b]:2200', 'axb', 2200)).toBe(false);
    expect(patternsMatch('(x|y)', 'x', 22)).toBe(false);
    expect(patternsMatch('[z-a]:1', 'q', 1)).toBe(false);
  });
});
