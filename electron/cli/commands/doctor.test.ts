import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCore } from '../../core/api/core';
import { amw } from '../../../tests/support/cli';
import { tempDir } from '../../../tests/support/temp';

const LOG = [
  'loading model',
  '[ERROR] 2024-05-21-11:57:54 (PID:927000, Device:3, RankID:3) ERR02200 DIST call hccl api failed.',
  'EJ0001: 2024-05-21-11:57:54.167.645 Failed to initialize the HCCP process. Reason: Maybe the last training process is running.',
  '        Solution: Wait for 10s after killing the last training process and try again.',
  "AttributeError: 'NoneType' object has no attribute 'shape'",
].join('\n');

describe('amw doctor', () => {
  it('--json prints {matches, unmatched} in order and exits 1 on a known error', async () => {
    const dir = tempDir();
    const file = join(dir, 'train.log');
    writeFileSync(file, LOG);
    const r = await amw(['doctor', file, '--json'], { AMW_HOME: dir });
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout) as {
      matches: {
        rule: string;
        line: number;
        text: string;
        cause: string;
        fix: string;
        category: string;
      }[];
      unmatched: { line: number; text: string }[];
    };
    expect(out.matches.map((m) => [m.rule, m.line, m.category])).toEqual([
      ['hccl-init-failed', 2, 'hccl'],
      ['hccp-busy', 3, 'device'],
    ]);
    expect(out.matches[1]!.fix).toMatch(/npu-smi info/);
    expect(out.unmatched).toEqual([
      { line: 5, text: "AttributeError: 'NoneType' object has no attribute 'shape'" },
    ]);
  });

  it('reads stdin and answers in zh-CN', async () => {
    const dir = tempDir();
    const r = await amw(['--lang', 'zh-CN', 'doctor', '-'], { AMW_HOME: dir }, LOG);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('上一个任务仍占用 NPU');
    expect(r.stdout).toContain('第 3 行');
    expect(r.stdout).toContain('看起来像错误、但没有规则识别的行');
  });

  it('exits 0 on a clean log, 2 on a folder without logs', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'ok.log'), 'step 1 loss 2.0\nstep 2 loss 1.9\n');
    const clean = await amw(['doctor', join(dir, 'ok.log')], { AMW_HOME: dir });
    expect(clean.code).toBe(0);
    expect(clean.stdout).toContain('No known failure');
    const empty = join(dir, 'empty');
    mkdirSync(empty);
    const none = await amw(['doctor', empty], { AMW_HOME: dir });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('No log files');
    expect(none.stderr).toContain('ascend/log/debug/plog');
  });

  it('doctor.diagnose through the contract: text or path, language, validation', async () => {
    const dir = tempDir();
    const core = createCore({ env: { AMW_HOME: dir } as NodeJS.ProcessEnv });
    try {
      const r = await core.call('doctor.diagnose', { text: LOG, lang: 'zh-CN' });
      expect(r.matches.map((m) => m.rule)).toEqual(['hccl-init-failed', 'hccp-busy']);
      expect(r.matches[1]!.cause).toMatch(/HCCP/);
      await expect(core.call('doctor.diagnose', { text: 'x', path: '/tmp' })).rejects.toMatchObject(
        {
          code: 'VALIDATION',
        },
      );
      await expect(core.call('doctor.diagnose', { path: '-' })).rejects.toMatchObject({
        code: 'VALIDATION',
      });
    } finally {
      await core.close();
    }
  });
});
