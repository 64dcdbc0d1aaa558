import { chownSync, cpSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test, expect } from './support/fixtures';
import { Shell } from './pages/shell';
import { simHostsSupported, startSimHost, type SimHost } from './hosts/sim-host';

const support = simHostsSupported();

test.describe('operator coverage stage', () => {
  test.skip(!support.ok, support.ok ? '' : support.reason);
  let sim: SimHost;
  test.beforeAll(async () => {
    sim = await startSimHost('e2e-ops', 'ascend-910b');
    const models = join(sim.dir, 'home', 'models');
    cpSync(join(process.cwd(), 'tests/fixtures/ops-models'), models, { recursive: true });
    const { uid, gid } = statSync(join(sim.dir, 'home'));
    chownSync(models, uid, gid);
  });
  test.afterAll(async () => {
    await sim.stop();
  });

  test('trace a model on a host, read the breakdown, filter the op table, compare versions', async ({
    app,
  }) => {
    const { page } = app;
    await new Shell(page).ready();
    await page.getByTestId('nav-hosts').click();
    await page.getByTestId('open-add-host').click();
    const d = page.getByTestId('add-host-dialog');
    await d.getByTestId('host-name').fill('npu-ops');
    await d.getByTestId('host-hostname').fill(sim.host);
    await d.getByTestId('host-port').fill(String(sim.port));
    await d.getByTestId('host-username').fill(sim.user);
    await d.getByTestId('host-identityFile').fill(sim.clientKey);
    await d.getByTestId('host-save').click();
    await expect(page.getByTestId('host-title')).toHaveText('npu-ops');

    await page.getByTestId('nav-sessions').click();
    await page.getByTestId('open-new-session').click();
    await page.getByTestId('pick-host-npu-ops').check();
    await page.getByTestId('session-title').fill('ops coverage');
    await page.getByTestId('session-create').click();
    // the same code scanned in this session: an op's source line then opens in the code review
    await page.getByTestId('nav-code').click();
    await page.getByTestId('scan-path').fill(join(sim.dir, 'home', 'models'));
    await page.getByTestId('scan-session').selectOption({ label: '#1 ops coverage' });
    await page.getByTestId('scan-start').click();
    await expect(page.getByTestId('scan-review')).toBeVisible({ timeout: 30_000 });
    await page.getByTestId('nav-sessions').click();
    await page.getByTestId('sessions-table').locator('tr.clickable').first().click();
    await page.getByTestId('stage-ops').click();
    const panel = page.getByTestId('ops-host-npu-ops');
    await panel.getByTestId('ops-entry').fill('models/models.py:quantized');
    await panel.getByTestId('ops-run').click();
    // first contact with the host: confirm its key
    const hk = page.getByTestId('hostkey-dialog');
    await expect(hk).toBeVisible({ timeout: 20_000 });
    await hk.getByTestId('hostkey-accept').click();

    await expect(panel.getByTestId('ops-result')).toBeVisible({ timeout: 60_000 });
    await expect(panel.getByTestId('ops-count-cpu-fallback')).not.toHaveText('0');
    const rows = panel.getByTestId('op-row');
    await panel.getByTestId('ops-filter-class').selectOption('cpu-fallback');
    await expect(rows.first()).toHaveAttribute('data-class', 'cpu-fallback');
    await expect(panel.locator('[data-op="aten::int_repr.default"]')).toBeVisible();
    await panel.locator('[data-op="aten::int_repr.default"]').getByTestId('op-source').click();
    await expect(panel.getByTestId('op-source-text')).toContainText('int_repr()');
    await panel.getByTestId('op-source-code').click();
    await expect(page.getByTestId('scan-review')).toBeVisible();
    await expect(page.locator('[data-testid=tree-file][aria-current=true]')).toHaveAttribute(
      'data-file',
      'models.py',
    );
    await expect(page.getByTestId('diff-editor')).toHaveAttribute('data-ready', 'true', {
      timeout: 30_000,
    });
    await page.goBack();
    await page.getByTestId('stage-ops').click();
    // what torch_npu 2.9.0 changes for this model
    await panel.getByTestId('ops-compare').selectOption('2.9.0');
    await expect(panel.getByTestId('ops-compare-result')).toContainText('aten::int_repr');
    await expect(panel.getByTestId('check-ops.cpu-fallback')).toHaveAttribute(
      'data-status',
      'warn',
    );

    // the stage has its own address: it opens the ops stage directly, and a reload keeps it
    await expect(page).toHaveURL(/#\/sessions\/1\/ops$/);
    await page.getByTestId('nav-hosts').click();
    await expect(page.getByTestId('session-view')).toBeHidden();
    await page.evaluate("location.hash = '#/sessions/1/ops'");
    await expect(page.getByTestId('session-view')).toHaveAttribute('data-stage', 'ops');
    await expect(panel.getByTestId('ops-result')).toBeVisible();
    await page.reload();
    await new Shell(page).ready();
    await expect(page.getByTestId('stage-ops')).toHaveAttribute('aria-current', 'page');
    await expect(panel.getByTestId('ops-result')).toBeVisible();
    await expect(panel.getByTestId('check-ops.cpu-fallback')).toHaveAttribute(
      'data-status',
      'warn',
    );
  });
});
