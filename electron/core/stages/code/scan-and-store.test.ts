// The code stage's checks as a session shows them: one card per rule, its remedy readable.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scanProject } from '../../analyzer/scan';
import { textIn } from '../../i18n';
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
});
