import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { en, zh } from '../../../tests/support/text';
import { tempDir } from '../../../tests/support/temp';
import { resourcesDir } from '../paths';
import { distKey, importCauseText, numpyText, packageText } from './keys';
import { loadKnowledge } from './load';

describe('knowledge data', () => {
  it('loads the env thresholds and import causes, patterns compiled', () => {
    const k = loadKnowledge();
    expect(k.envLimits.nofileMin).toBe(65536);
    const cause = k.importCauses.find((c) => c.pattern.test("No module named 'torch_npu'"));
    expect(cause?.id).toBe('no-torch-npu');
  });

  it('refuses a pattern that is not a regular expression, naming the file', () => {
    const dir = tempDir();
    cpSync(join(resourcesDir(), 'knowledge'), dir, { recursive: true });
    const file = join(dir, 'import-causes.json');
    const data = JSON.parse(readFileSync(file, 'utf8')) as { causes: { pattern: string }[] };
    data.causes[0]!.pattern = 'libhccl(';
    writeFileSync(file, JSON.stringify(data));
    expect(() => loadKnowledge(dir)).toThrow(
      /import-causes\.json is not valid: causes\.0\.pattern/,
    );
  });

  it('serves its texts as the knowledge namespace, in both languages', () => {
    const k = loadKnowledge();
    for (const p of k.packages.packages) {
      expect(en(packageText(p.dist, 'message'))).toBe(p.message.en);
      expect(zh(packageText(p.dist, 'fix'))).toBe(p.fix['zh-CN']);
    }
    for (const c of k.importCauses) {
      expect(zh(importCauseText(c.id))).toBe(c.message['zh-CN']);
      expect(en(importCauseText(c.id, 'fix'))).toBe(c.fix.en);
    }
    expect(en(numpyText('message', { version: '2.1.0' }))).toMatch(/^numpy 2\.1\.0 is 2\.x/);
  });

  it('keys a distribution by its normalised name: dots would read as nesting', () => {
    expect(distKey('zope.interface')).toBe('zope-interface');
    expect(distKey('Flash_Attn')).toBe('flash-attn');
    expect(packageText('fbgemm_gpu', 'fix')).toEqual(packageText('fbgemm-gpu', 'fix'));
  });
});
