import { spawnSync } from 'node:child_process';
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
    // labels end in the language's colon
    expect(r.stdout).toContain('   原因：');
    expect(r.stdout).not.toContain('原因:');
  });

  it('a log with only unknown error lines is not reported as clean', async () => {
    const dir = tempDir();
    const r = await amw(
      ['doctor', '-'],
      { AMW_HOME: dir },
      'step 1\nValueError: shapes (3,) and (4,) differ\n',
    );
    expect(r.stdout).toContain('No known failure, but 1 line looks like an error');
    expect(r.stdout).toContain('2: ValueError: shapes');
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

  // What unported CUDA code prints on a host without NVIDIA GPUs, from the real CPU PyTorch that
  // the simulated hosts use (python3-torch): the run stops, the checkpoint will not load, NCCL is
  // missing and mixed precision quietly switches itself off.
  const torchPython = ['/usr/bin/python3', 'python3'].find(
    (p) => spawnSync(p, ['-c', 'import torch'], { stdio: 'ignore' }).status === 0,
  );
  it.skipIf(!torchPython)('explains what CUDA code prints on a host without CUDA', async () => {
    const script = [
      'import os, traceback, warnings',
      'warnings.simplefilter("always")',
      'import torch, torch.distributed as dist',
      'def run(f):',
      '    try:',
      '        f()',
      '    except Exception:',
      '        traceback.print_exc()',
      'run(lambda: torch.zeros(1).cuda())',
      'run(lambda: torch.serialization.validate_cuda_device("cuda:0"))',
      'os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="29591")',
      'run(lambda: dist.init_process_group("nccl", rank=0, world_size=1))',
      'torch.cuda.amp.GradScaler()',
      // a project's CUDA extension built where there is no CUDA toolkit (an Ascend host)
      'import torch.utils.cpp_extension as ext',
      'ext.CUDA_HOME = None',
      'run(lambda: ext.CUDAExtension("ops", ["ops.cu"]))',
    ].join('\n');
    const py = spawnSync(torchPython!, ['-c', script], { encoding: 'utf8' });
    const log = `${py.stdout}${py.stderr}`;
    const dir = tempDir();
    const r = await amw(['doctor', '-', '--json'], { AMW_HOME: dir }, log);
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout) as { matches: { rule: string; category: string }[] };
    expect(out.matches.map((m) => m.rule)).toEqual([
      'cuda-call-on-npu-host',
      'cuda-checkpoint-location',
      'nccl-backend',
      'amp-disabled-no-cuda',
      'cuda-extension-build',
    ]);
    expect(new Set(out.matches.map((m) => m.category))).toEqual(new Set(['cuda']));
  });
});
