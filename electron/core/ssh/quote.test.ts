import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { remoteCommand, shellQuote } from './quote';

const HOSTILE = [
  "it's",
  '"double"',
  '$(touch /tmp/amw-pwned)',
  '`touch /tmp/amw-pwned`',
  '${HOME}',
  '$HOME',
  'a b\tc',
  'line1\nline2',
  '*',
  '?[a-z]',
  '~',
  '; rm -rf /',
  '| cat /etc/passwd',
  '&& echo hi',
  '> /tmp/out',
  '\\',
  "''",
  '-n',
  '',
  '昇腾 NPU ✓',
  '\u202e',
];

describe('shellQuote', () => {
  it('delivers every hostile string to the program unchanged, through a real sh', () => {
    // printf prints each argument followed by NUL: exactly what the program received
    const cmd = remoteCommand('printf', '%s\\0', ...HOSTILE);
    const out = execFileSync('sh', ['-c', cmd], { encoding: 'utf8' });
    expect(out.split('\0').slice(0, -1)).toEqual(HOSTILE);
  });

  it('leaves plain words readable', () => {
    expect(remoteCommand('npu-smi', 'info', '-t', 'board', '-i', '0')).toBe(
      'npu-smi info -t board -i 0',
    );
    expect(shellQuote('/usr/local/Ascend/driver/version.info')).toBe(
      '/usr/local/Ascend/driver/version.info',
    );
  });

  it('refuses NUL, which no shell argument can carry', () => {
    expect(() => shellQuote('a\0b')).toThrow(/NUL/);
  });
});
