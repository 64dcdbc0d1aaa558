import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../../tests/support/temp';
import { en, zh } from '../../../tests/support/text';
import { scanProject } from '../analyzer/scan';
import { createCore, type Core } from '../api/core';

const FIXTURES = join(__dirname, '../../../tests/fixtures/code');

let core: Core | undefined;
afterEach(() => core?.close());

describe('a stored scan reads in the language chosen now', () => {
  it('findings made in English render in 中文 from the same stored keys, as a zh scan words them', async () => {
    const project = join(tempDir(), 'hstu');
    cpSync(join(FIXTURES, 'hstu-recsys'), project, { recursive: true });
    core = createCore({ home: tempDir() });
    await core.call('settings.set', { language: 'en' });
    const started = await core.call('code.scan', { path: project, mode: 'rewrite' });
    const job = await core.jobs.wait(started.jobId);
    const { scanId } = job.result as { scanId: number };
    const stored = (await core.call('code.get', { scanId })).findings;
    expect(stored.length).toBeGreaterThan(5);
    // what a scan made in each language says, finding by finding
    const zhScan = (await scanProject(project, { lang: 'zh-CN' })).findings;
    const enScan = (await scanProject(project, { lang: 'en' })).findings;
    const at = (f: { ruleId: string; file: string; line: number; column: number }) =>
      `${f.ruleId}@${f.file}:${f.line}:${f.column}`;
    const zhBy = new Map(zhScan.map((f) => [at(f), f]));
    const enBy = new Map(enScan.map((f) => [at(f), f]));
    for (const f of stored) {
      expect(f.text, at(f)).toBeDefined();
      expect(f.message).toBe(enBy.get(at(f))!.message); // worded at scan time, in English
      // switched to zh-CN later: the same stored value reads as a zh-CN scan words it
      expect(zh(f.text!.message), at(f)).toBe(zhBy.get(at(f))!.message);
      expect(en(f.text!.message), at(f)).toBe(f.message);
      if (f.text!.fix) expect(zh(f.text!.fix)).toBe(zhBy.get(at(f))!.fix!.description);
    }
  });
});
