import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { amw } from '../../../../tests/support/cli';
import { REFERENCE } from '../../../../tests/support/reference';

const F = `${REFERENCE}/fixtures/profiling`;
const scratch = mkdtempSync(join(tmpdir(), 'amw-profile-cli-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('amw profile …: the stage’s own commands (cli.commands)', () => {
  it('import without --store reads the folder and leaves the data dir alone', async () => {
    const home = join(scratch, 'never-created');
    const r = await amw(['profile', 'import', join(F, 'torch_npu_megatron_rank0'), '--json'], {
      AMW_HOME: home,
    });
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as { kind: string }).kind).toBe('torch_npu');
    // nothing stored, so no database was opened or created
    expect(existsSync(home)).toBe(false);
    // in --json the warnings are in the document, not on stderr
    expect(r.stderr).toBe('');
  });

  it('--lang zh-CN: the advice of the --json document is in Chinese, the ids as they are', async () => {
    const args = ['profile', 'import', join(F, 'torch_npu_megatron_rank0'), '--json'];
    const zh = JSON.parse((await amw(['--lang', 'zh-CN', ...args])).stdout) as {
      advice: { id: string; message: string }[];
      warnings: { message: string }[];
    };
    const en = JSON.parse((await amw(['--lang', 'en', ...args])).stdout) as typeof zh;
    const aicpu = (d: typeof zh) => d.advice.find((a) => a.id === 'aicpu')!.message;
    expect(aicpu(en)).toContain('kernels ran on the AI CPU');
    expect(aicpu(zh)).toMatch(/[\u4e00-\u9fff]/);
    expect(aicpu(zh)).not.toBe(aicpu(en));
    expect(zh.warnings[0]!.message).not.toBe(en.warnings[0]!.message);
    // the text form too: its lines and its warnings on stderr
    const text = await amw([
      '--lang',
      'zh-CN',
      'profile',
      'import',
      join(F, 'torch_npu_megatron_rank0'),
    ]);
    expect(text.stdout).toContain('耗时最长的 kernel：');
    expect(text.stdout).toMatch(/rank \d+ 第 \d+ 步：计算 [\d,]+ µs/);
    expect(text.stderr).toMatch(/^警告：ASCEND_PROFILER_OUTPUT\/kernel_details\.csv:17：/m);
  });

  it('gather takes the host-access options and --ranks; compare refuses what is neither', async () => {
    const group = await amw(['profile', '--help']);
    expect(group.stdout).toContain('Import profiler output and compare profiles');
    const help = await amw(['profile', 'gather', '--help']);
    for (const flag of ['--ranks <n>', '--password-stdin', '--accept-new-host-key', '--session'])
      expect(help.stdout).toContain(flag);
    const bad = await amw(['profile', 'compare', join(F, 'torch_npu_megatron_rank0'), 'nope'], {
      AMW_HOME: join(scratch, 'home'),
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('nope is neither a folder nor a stored run id');
  });
});
