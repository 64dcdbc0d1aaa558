import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createCore } from '../../api/core';
import { REFERENCE } from '../../../../tests/support/reference';

const F = `${REFERENCE}/fixtures/profiling`;
const home = mkdtempSync(join(tmpdir(), 'amw-prof-cmp-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

describe('two profiles of a session: the list to pick from and the report comparison', () => {
  it('profiling.list puts the session first; the report compares the newest with the one before', async () => {
    const core = createCore({ env: { AMW_HOME: home } as NodeJS.ProcessEnv });
    try {
      const imp = async (dir: string, sessionId?: number) => {
        const s = await core.call('profiling.import', { dir: join(F, dir), sessionId });
        await core.jobs.wait(s.jobId);
        return s;
      };
      const other = await imp('torch_npu_megatron_rank0'); // another session
      const before = await imp('torch_npu_level0_rank0_ascend_pt');
      const after = await imp('torch_npu_level1_rank0_ascend_pt', before.sessionId);
      const list = await core.call('profiling.list', { sessionId: before.sessionId });
      expect(list.map((p) => p.stageRunId)).toEqual([
        after.stageRunId,
        before.stageRunId,
        other.stageRunId,
      ]);
      expect(list[0]).toMatchObject({ sessionId: before.sessionId, host: '(local)' });

      const md = await core.call('reports.export', {
        source: { sessionId: before.sessionId },
        format: 'md',
        language: 'en',
        hideNames: false,
      });
      const text = md.text ?? '';
      expect(text).toContain('#### Against the previous profile of the session');
      // 136.58 ms (level1) against 116.25 ms (level0): ×1.175
      expect(text).toContain('Mean step time: 136.58 ms against 116.25 ms (×1.175)');
      // the task types both runs have, side by side (HCCL: 81.5 ms → 102.0 ms of kernel time)
      expect(text).toMatch(/\| `HCCL` \| [\d,]+ \| [\d,]+ \| \+[\d,]+ \| ×[\d.]+ \|/);
      const zh = await core.call('reports.export', {
        source: { sessionId: before.sessionId },
        format: 'md',
        language: 'zh-CN',
        hideNames: false,
      });
      expect(zh.text).toContain('与本会话上一份性能数据对比');
      expect(zh.text).toContain('平均单步耗时：136.58 ms 对比 116.25 ms（×1.175）');

      const html = await core.call('reports.export', {
        source: { sessionId: before.sessionId },
        format: 'html',
        language: 'en',
        hideNames: false,
      });
      expect(html.text).toContain('Against the previous profile of the session');
      expect(html.text).not.toMatch(/<script/i);
      // the JSON report carries the comparison on the newest profile only
      const json = await core.call('reports.export', {
        source: { sessionId: before.sessionId },
        format: 'json',
        language: 'en',
        hideNames: false,
      });
      const doc = JSON.parse(json.text ?? '{}') as Record<string, unknown>;
      const found = JSON.stringify(doc).match(/"stepRatio":([\d.]+)/);
      expect(Number(found?.[1])).toBeCloseTo(136581.009 / 116251.182, 6);

      // a pair whose op types map (hcom_allReduce_, Cast): the names are code spans, which the
      // Markdown cannot reinterpret (no backslash escapes inside them, shown as written)
      const first = await imp('torch_npu_level1_rank0_ascend_pt');
      await imp('torch_npu_megatron_rank0', first.sessionId);
      const ops = await core.call('reports.export', {
        source: { sessionId: first.sessionId },
        format: 'md',
        language: 'en',
        hideNames: false,
      });
      const opsText = ops.text ?? '';
      const at = opsText.indexOf('**Largest differences per op');
      expect(at).toBeGreaterThan(0);
      const rows = opsText
        .slice(at)
        .split('\n')
        .filter((l) => l.startsWith('| `'));
      expect(rows.map((l) => l.split(' | ')[0])).toEqual(
        expect.arrayContaining(['| `hcom_allReduce_`', '| `Cast`']),
      );
    } finally {
      await core.close();
    }
  }, 60_000);
});
