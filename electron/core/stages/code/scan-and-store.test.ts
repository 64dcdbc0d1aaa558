// The code stage's checks as a session shows them: one card per rule, its remedy readable.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scanProject } from '../../analyzer/scan';
import { textIn } from '../../i18n';
import { msg } from '../../../../shared/api/text';
import { codeOutcomes } from './scan-and-store';

const FIXTURES = join(__dirname, '../../../../tests/fixtures/code');

describe('code stage outcomes', () => {
  it("a rule's remedy names what was found, with no template placeholder left, in both languages", async () => {
    const outcomes = codeOutcomes(await scanProject(join(FIXTURES, 'det-ops')));
    const ctx = outcomes.find((o) => o.id === 'ext.autograd-ctx-device')!;
    for (const lang of ['en', 'zh-CN'] as const) {
      const remedy = textIn(lang)(ctx.remediation);
      expect(remedy).toMatch(/ctx\.device = \w+\.device\.type/);
      expect(remedy).not.toContain('{{');
    }
    // and no card of the scan shows a placeholder
    for (const o of outcomes) expect(textIn('en')(o.remediation)).not.toContain('{{');
  });

  it('advice passes and says it is optional; a required change says what was found', async () => {
    const scan = await scanProject(join(FIXTURES, 'nanogpt-ddp'));
    // a count that reads right when it is one ("1 optimizers" did not)
    expect(scan.findings.find((f) => f.ruleId === 'optim.npu-fused')!.message).toMatch(
      /\(optimizers built in this file: 1\)\.$/,
    );
    const outcomes = codeOutcomes(scan);
    const fused = outcomes.find((o) => o.id === 'optim.npu-fused')!;
    expect(fused.status).toBe('pass');
    expect(textIn('en')(fused.summary)).toMatch(
      /^1 optional improvement in 1 file, at train\.py:\d+: .*optimizers built in this file: 1/,
    );
    expect(textIn('zh-CN')(fused.summary)).toMatch(
      /^1 个文件中有 1 处可选优化，见 train\.py:\d+：/,
    );
    const api = outcomes.find((o) => o.id === 'cuda.api')!;
    expect(api.status).toBe('fail');
    // what was found and where first, in the language shown
    const firstApi = scan.findings
      .filter((f) => f.ruleId === 'cuda.api')
      .sort((a, b) => a.line - b.line)[0]!;
    expect(textIn('en')(api.summary)).toBe(
      `5 findings in 1 file; the first at train.py:${firstApi.line}: ${firstApi.message}`,
    );
    expect(textIn('zh-CN')(api.summary)).toMatch(/^1 个文件中有 5 处，见 train\.py:\d+：.*CUDA/);
    // a summary stored by an earlier version (count and files only) still reads whole
    const stored = msg('stage-code:findings', {
      count: 5,
      files: msg('stage-code:files', { count: 1 }),
    });
    expect(textIn('en')(stored)).toBe('5 findings in 1 file.');
  });
});
