import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { test, expect } from './support/fixtures';
import { Shell } from './pages/shell';
import { REFERENCE } from '../tests/support/reference';

const F = join(REFERENCE, 'fixtures/profiling');

/** Two imports into one session, through the CLI on the same data dir as the running app. */
function importTwo(home: string): void {
  const amw = (...args: string[]) =>
    execFileSync(process.execPath, ['bin/amw.js', ...args], {
      env: { ...process.env, AMW_HOME: home, LANG: 'en_US.UTF-8' },
      stdio: 'pipe',
    });
  amw('profile', 'import', join(F, 'torch_npu_level1_rank0_ascend_pt'), '--store');
  amw('profile', 'import', join(F, 'torch_npu_megatron_rank0'), '--session', '1');
}

test('profiling: two stored profiles compared side by side, per op searchable, in both languages', async ({
  app,
}) => {
  const { page } = app;
  importTwo(app.home);
  const shell = new Shell(page);
  await shell.ready();
  await page.evaluate("location.hash = '#/sessions/1/profiling'");
  await expect(page.getByTestId('profiling-stage')).toBeVisible();
  await page.getByTestId('profiling-compare-toggle').click();
  const view = page.getByTestId('profiling-compare');
  // the newest is b, the one before a; the step row and each category, a against b
  await expect(view.getByTestId('profiling-compare-b')).toHaveValue('2');
  await expect(view.getByTestId('profiling-compare-a')).toHaveValue('1');
  await expect(view.getByTestId('profiling-compare-step')).toContainText('Mean step time');
  await expect(view.getByTestId('profiling-compare-cat-computing')).toBeVisible();
  await expect(view.getByTestId('profiling-compare-ratio')).toContainText('b / a step time: ×');
  // per op where the names map: HCCL's allReduce and Cast; the search narrows to one
  const ops = view.getByTestId('profiling-compare-ops');
  await expect(ops.locator('tr[data-name="hcom_allReduce_"]')).toBeVisible();
  await expect(ops.locator('tr[data-name="Cast"]')).toBeVisible();
  await view.getByTestId('profiling-compare-search').fill('cast');
  await expect(ops.locator('tbody tr')).toHaveCount(1);
  await expect(ops.locator('tr[data-name="Cast"]')).toBeVisible();
  // the same run on both sides is refused, not compared with itself
  await view.getByTestId('profiling-compare-a').selectOption('2');
  await expect(view.locator('.notice.warn')).toBeVisible();
  await view.getByTestId('profiling-compare-a').selectOption('1');

  await shell.language('zh-CN');
  await expect(view.getByTestId('profiling-compare-step')).toContainText('平均单步耗时');
  await expect(view.getByTestId('profiling-compare-ratio')).toContainText('单步耗时 b / a');
  await page.getByTestId('profiling-compare-toggle').click();
  await expect(page.getByTestId('profiling-compare')).toBeHidden();
  await expect(page.getByTestId('profiling-breakdown')).toBeVisible();
});
