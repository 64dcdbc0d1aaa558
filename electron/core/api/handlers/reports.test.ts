// A review's decision through the engine (what the CLI and serve mode reach too): the refusals
// the review panel makes, made where every caller meets them.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { explainError, translator } from '../../../../shared/i18n';
import { createCore } from '../core';
import { tempDir } from '../../../../tests/support/temp';

describe('reports.decide', () => {
  it('refuses to approve a blocked session or one where nothing ran, and a request for changes without a reason', async () => {
    const home = tempDir();
    const work = tempDir();
    const core = createCore({ env: { AMW_HOME: home } as NodeJS.ProcessEnv });
    try {
      mkdirSync(join(work, 'trainer'));
      writeFileSync(join(work, 'trainer', 'main.py'), 'import torch\nx = torch.ones(2).cuda()\n');
      const blocked = (await core.call('sessions.create', { title: 'cuda left in' })).id;
      const { jobId } = await core.call('code.scan', {
        path: join(work, 'trainer'),
        sessionId: blocked,
      });
      await core.jobs.wait(jobId);
      const source = { sessionId: blocked };
      expect((await core.call('reports.build', { source })).summary.readiness).toBe('blocked');

      const approve = core.call('reports.decide', { source, decision: 'approve', by: 'Li Si' });
      await expect(approve).rejects.toMatchObject({ code: 'CONFLICT' });
      const err = await approve.catch((e: unknown) => e as { code: string; message: string });
      // said in the reader's language, not as a bare key
      expect(explainError(translator('zh-CN'), err as never, 'zh-CN')).toContain('不能批准');
      for (const note of ['', '   '])
        await expect(
          core.call('reports.decide', { source, decision: 'changes-requested', by: 'Li Si', note }),
        ).rejects.toMatchObject({ code: 'VALIDATION', message: /needs a reason/ });
      // nothing of either was recorded
      expect((await core.call('reports.build', { source })).review.decisions).toEqual([]);

      // a request for changes with its reason is taken, as is an approval of a session not blocked
      await core.call('reports.decide', {
        source,
        decision: 'changes-requested',
        by: 'Li Si',
        note: 'Port the .cuda() calls first.',
      });
      // a session where nothing ran has nothing to approve
      const fresh = (await core.call('sessions.create', { title: 'nothing run yet' })).id;
      await expect(
        core.call('reports.decide', {
          source: { sessionId: fresh },
          decision: 'approve',
          by: 'Li',
        }),
      ).rejects.toMatchObject({ code: 'CONFLICT', message: /nothing has run/ });
      // nor one whose only run was cancelled (or cut short, or is still running)
      mkdirSync(join(work, 'ported'));
      writeFileSync(join(work, 'ported', 'main.py'), 'import torch\nx = torch.ones(2)\n');
      const cut = (await core.call('sessions.create', { title: 'cancelled' })).id;
      await core.jobs.wait(
        (await core.call('code.scan', { path: join(work, 'ported'), sessionId: cut })).jobId,
      );
      const raw = new Database(core.location.dbPath);
      raw.prepare(`UPDATE stage_runs SET status = 'cancelled' WHERE session_id = ?`).run(cut);
      raw.close();
      await expect(
        core.call('reports.decide', { source: { sessionId: cut }, decision: 'approve', by: 'Li' }),
      ).rejects.toMatchObject({ code: 'CONFLICT', message: /nothing has run/ });
      // one whose code scan came back clean is approved
      const clean = (await core.call('sessions.create', { title: 'ported' })).id;
      await core.jobs.wait(
        (await core.call('code.scan', { path: join(work, 'ported'), sessionId: clean })).jobId,
      );
      await core.call('reports.decide', {
        source: { sessionId: clean },
        decision: 'approve',
        by: 'Li Si',
      });
      expect(
        (await core.call('reports.build', { source })).review.decisions.map((d) => d.decision),
      ).toEqual(['changes-requested']);
      expect(
        (await core.call('reports.build', { source: { sessionId: clean } })).review.decisions.map(
          (d) => d.decision,
        ),
      ).toEqual(['approve']);
      expect(
        (await core.call('reports.build', { source: { sessionId: fresh } })).review.decisions,
      ).toEqual([]);
    } finally {
      await core.close();
    }
  });
});
