// The code section of a report, from a real engine and SQLite store: which scan it reports.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCore } from '../../api/core';
import { tempDir } from '../../../../tests/support/temp';

describe('code section of a report', () => {
  it('reports the newest scan, with the history of that folder only', async () => {
    const home = tempDir();
    const work = tempDir();
    const core = createCore({ env: { AMW_HOME: home } as NodeJS.ProcessEnv });
    try {
      const scan = async (folder: string) => {
        const { jobId } = await core.call('code.scan', { path: join(work, folder), sessionId });
        return core.jobs.wait(jobId);
      };
      for (const [folder, src] of [
        ['trainer', 'import torch\nx = torch.ones(2).cuda()\n'],
        ['serving', 'import torch\ndevice = "cuda:0"\ntorch.cuda.synchronize()\n'],
      ] as const) {
        mkdirSync(join(work, folder));
        writeFileSync(join(work, folder, 'main.py'), src);
      }
      const sessionId = (await core.call('sessions.create', { title: 'two folders' })).id;
      await scan('trainer');
      await scan('serving');
      await scan('trainer');
      const r = await core.call('reports.build', { source: { sessionId }, language: 'en' });
      expect(r.code!.root).toBe(join(work, 'trainer'));
      const trainerScans = (await core.call('code.scans', { sessionId }))
        .filter((s) => s.root === join(work, 'trainer'))
        .map((s) => s.id)
        .sort((a, b) => a - b);
      expect(r.code!.history.map((h) => h.scanId)).toEqual(trainerScans);
      // the findings table names each rule by its title in the report's language, its id after
      const exported = async (format: 'md' | 'html', language: 'en' | 'zh-CN') =>
        (await core.call('reports.export', { source: { sessionId }, format, language })).text ?? '';
      // (Markdown escapes the brackets)
      expect(await exported('md', 'en')).toContain(
        '| `main.py:2` | error .cuda\\(\\) calls `device.cuda-method` |',
      );
      expect(await exported('md', 'zh-CN')).toContain('.cuda\\(\\) 调用 `device.cuda-method`');
      expect(await exported('html', 'en')).toContain(
        '.cuda() calls <code>device.cuda-method</code>',
      );
    } finally {
      await core.close();
    }
  });

  it('a file accepted part way reads "Partly accepted: 1 of 2 changes", not "accepted with changes"', async () => {
    const home = tempDir();
    const work = tempDir();
    const core = createCore({ env: { AMW_HOME: home } as NodeJS.ProcessEnv });
    try {
      mkdirSync(join(work, 'two'));
      const lines = [
        'import torch',
        'a = torch.ones(2).cuda()',
        ...Array(8).fill('b = 1'),
        'torch.cuda.synchronize()',
      ];
      writeFileSync(join(work, 'two', 'main.py'), `${lines.join('\n')}\n`);
      const sessionId = (await core.call('sessions.create', { title: 'part way' })).id;
      const { jobId } = await core.call('code.scan', { path: join(work, 'two'), sessionId });
      const { scanId } = (await core.jobs.wait(jobId)).result as { scanId: number };
      const file = await core.call('code.file', { scanId, file: 'main.py' });
      expect(file.diff.length).toBeGreaterThan(1);
      // only the first proposed block taken
      const [a0, a1, b0, b1] = file.diff[0]!;
      const o = file.original.split('\n');
      const p = file.proposed.split('\n');
      const text = [...o.slice(0, a0 - 1), ...p.slice(b0 - 1, b1 - 1), ...o.slice(a1 - 1)].join(
        '\n',
      );
      await core.call('code.review', { scanId, file: 'main.py', review: 'edited', text });
      const r = await core.call('reports.build', { source: { sessionId }, language: 'en' });
      expect(r.code!.diffs[0]).toMatchObject({
        file: 'main.py',
        partial: { accepted: 1, total: file.diff.length },
      });
      const md = (
        await core.call('reports.export', { source: { sessionId }, format: 'md', language: 'en' })
      ).text!;
      expect(md).toContain(`\`main.py\` — Partly accepted: 1 of ${file.diff.length} changes`);
    } finally {
      await core.close();
    }
  });
});
