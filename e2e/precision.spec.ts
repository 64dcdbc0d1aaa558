import { chownSync, cpSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { test, expect } from './support/fixtures';
import { Shell } from './pages/shell';
import { docShot } from './support/doc-shot';
import { simHostsSupported, startSimHost, type SimHost } from './hosts/sim-host';

const support = simHostsSupported();

async function addHost(page: Page, name: string, sim: SimHost) {
  await page.getByTestId('nav-hosts').click();
  await page.getByTestId('open-add-host').click();
  const d = page.getByTestId('add-host-dialog');
  await d.getByTestId('host-name').fill(name);
  await d.getByTestId('host-hostname').fill(sim.host);
  await d.getByTestId('host-port').fill(String(sim.port));
  await d.getByTestId('host-username').fill(sim.user);
  await d.getByTestId('host-identityFile').fill(sim.clientKey);
  await d.getByTestId('host-save').click();
  await expect(page.getByTestId('host-title')).toHaveText(name);
}

/** Waits for `done`, accepting each host key the run meets on the way (first contact per host). */
async function untilDone(page: Page, done: ReturnType<Page['getByTestId']>) {
  const hk = page.getByTestId('hostkey-dialog');
  for (let i = 0; i < 60; i++) {
    if (await done.isVisible()) return;
    if (await hk.isVisible()) await hk.getByTestId('hostkey-accept').click();
    await page.waitForTimeout(1000);
  }
  await expect(done).toBeVisible();
}

/** Pixels of the pass colour (#3a9d5d) on the per-layer chart's canvas. */
function passPixels(page: Page): Promise<number> {
  return page.evaluate(`(() => {
    const c = document.querySelector('[data-testid="precision-curve"] canvas');
    if (!c) return 0;
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4)
      if (Math.abs(d[i] - 0x3a) < 8 && Math.abs(d[i + 1] - 0x9d) < 8 && Math.abs(d[i + 2] - 0x5d) < 8) n++;
    return n;
  })()`);
}

test.describe('precision stage', () => {
  test.skip(!support.ok, support.ok ? '' : support.reason);
  test.setTimeout(240_000);
  let base: SimHost;
  let odd: SimHost;
  test.beforeAll(async () => {
    // a CPU baseline and an NPU-profile host whose torch_npu stand-in perturbs GELU (test double)
    [base, odd] = await Promise.all([
      startSimHost('e2e-prec-cpu', 'no-cann'),
      startSimHost('e2e-prec-odd', 'npu-perturbed-gelu'),
    ]);
    for (const sim of [base, odd]) {
      const models = join(sim.dir, 'home', 'models');
      cpSync(join(process.cwd(), 'tests/fixtures/precision-models'), models, { recursive: true });
      const { uid, gid } = statSync(join(sim.dir, 'home'));
      chownSync(models, uid, gid);
    }
  });
  test.afterAll(async () => {
    await Promise.all([base?.stop(), odd?.stop()]);
  });

  test('run with aten ops, find the first divergence, run again, compare the two runs', async ({
    app,
  }) => {
    const { page } = app;
    await new Shell(page).ready();
    await addHost(page, 'cpu', base);
    await addHost(page, 'odd', odd);
    await page.getByTestId('nav-sessions').click();
    await page.getByTestId('open-new-session').click();
    await page.getByTestId('pick-host-odd').check();
    await page.getByTestId('pick-host-cpu').check();
    await page.getByTestId('session-title').fill('precision');
    await page.getByTestId('session-create').click();
    await page.getByTestId('stage-precision').click();

    const form = page.getByTestId('precision-form');
    await form.getByTestId('precision-target').selectOption('odd');
    await form.getByTestId('precision-baseline').selectOption('cpu');
    await form.getByTestId('precision-entry').fill('models/models.py:tiny');
    // an entry given: the script field is off
    await expect(form.getByTestId('precision-script')).toBeDisabled();
    await form.getByTestId('precision-ops').fill('gelu');
    await form.getByTestId('precision-run').click();
    await untilDone(page, page.getByTestId('precision-first'));
    await expect(page.getByTestId('precision-first')).toContainText('block.act');
    await expect(page.getByTestId('precision-modules')).toContainText('block.act/aten::gelu');
    // drill-down: block.act's statistics on both sides, from the stored raw dumps
    const act = page
      .getByTestId('precision-modules')
      .locator('tr.clickable')
      .filter({ has: page.locator('code', { hasText: /^block\.act$/ }) });
    await expect(act.locator('[data-result]')).toHaveText('error');
    await act.click();
    for (const side of ['baseline', 'target'])
      await expect(page.getByTestId(`precision-dump-${side}`)).toContainText('block.act');
    await expect(page.getByTestId('precision-dump-target')).toContainText('torch_npu');
    await docShot(page, 'precision-en');

    // the baseline host against itself: nothing diverges
    await form.getByTestId('precision-target').selectOption('cpu');
    await form.getByTestId('precision-run').click();
    const rows = page.getByTestId('precision-history').locator('tbody tr');
    await expect(rows).toHaveCount(2, { timeout: 120_000 });
    await expect(page.getByTestId('precision-result')).toContainText('No module diverges.', {
      timeout: 120_000,
    });
    // every error is 0 (the baseline against itself): the chart still draws a bar per module,
    // on its floor marked 0 — green (pass) pixels on the canvas, not an empty chart
    const curve = page.getByTestId('precision-curve');
    await expect(curve).toHaveAttribute('data-zero-floor', 'true');
    await expect(curve).toContainText('errors of exactly 0 are drawn on the floor line marked 0');
    await expect.poll(() => passPixels(page)).toBeGreaterThan(100);
    await page.getByTestId('precision-tick-1').check();
    await page.getByTestId('precision-tick-2').check();
    await expect(page.getByTestId('precision-compare-summary')).toContainText(
      'Run 2 against run 1: the divergence at block.act is gone; no module diverges.',
    );
    await expect(page.getByTestId('precision-compare-changed')).toContainText('block.act');
    // the same view in Chinese: engine text rendered in the language chosen now
    await new Shell(page).language('zh-CN');
    await expect(page.getByTestId('precision-compare-summary')).toContainText(
      '运行 2 对比运行 1：block.act 处的偏差已消失，没有模块出现偏差。',
    );
    await expect(page.getByTestId('precision-form')).toContainText('aten 算子');
    // the diverging run, its drill-down open, in Chinese: result words translated
    await page.getByTestId('precision-run-1').click();
    await expect(act.locator('[data-result]')).toHaveText('错误');
    await act.click();
    await expect(page.getByTestId('precision-dump-baseline')).toContainText('基线');
    await expect(page.getByTestId('precision-curve')).toContainText('通过');
    await docShot(page, 'precision-zh-CN');
    await page.screenshot({ path: 'test-results/e2e/precision-compare.png', fullPage: true });
  });
});
