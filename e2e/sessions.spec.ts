import { test, expect } from './support/fixtures';
import { Shell } from './pages/shell';
import { simHostsSupported, startSimHost, type SimHost } from './hosts/sim-host';

const support = simHostsSupported();

test.describe('guided session: environment stage', () => {
  test.skip(!support.ok, support.ok ? '' : support.reason);
  let sim: SimHost;
  test.beforeAll(async () => {
    sim = await startSimHost('e2e-env', 'torch-npu-mismatch');
  });
  test.afterAll(async () => {
    await sim.stop();
  });

  test('run the env checks on a host, read the verdicts, waive a failure with a reason', async ({
    app,
  }) => {
    const { page } = app;
    await new Shell(page).ready();
    // a host to run on
    await page.getByTestId('nav-hosts').click();
    await page.getByTestId('open-add-host').click();
    const d = page.getByTestId('add-host-dialog');
    await d.getByTestId('host-name').fill('npu-env');
    await d.getByTestId('host-hostname').fill(sim.host);
    await d.getByTestId('host-port').fill(String(sim.port));
    await d.getByTestId('host-username').fill(sim.user);
    await d.getByTestId('host-identityFile').fill(sim.clientKey);
    await d.getByTestId('host-save').click();
    await expect(page.getByTestId('host-title')).toHaveText('npu-env');

    await page.getByTestId('nav-sessions').click();
    await page.getByTestId('open-new-session').click();
    await page.getByTestId('pick-host-npu-env').check();
    await page.getByTestId('session-title').fill('bring-up');
    await page.getByTestId('session-create').click();
    await expect(page.getByTestId('session-title')).toHaveText('bring-up');
    // every stage of a migration is in this build: none is shown as not built
    await expect(page.getByTestId('stage-distributed')).toBeEnabled();

    const column = page.getByTestId('host-column-npu-env');
    await column.getByTestId('run-stage').click();
    await page.getByTestId('hostkey-accept').click();
    const matrix = column.getByTestId('check-env.version-matrix');
    await expect(matrix).toHaveAttribute('data-status', 'fail', { timeout: 30_000 });
    await expect(matrix).toContainText('torch_npu 2.5.1 is not built for CANN 8.5.0');
    await expect(column.getByTestId('check-env.npu-health')).toHaveAttribute('data-status', 'pass');
    await expect(column.getByTestId('stage-status')).toHaveText('fail');

    await matrix.getByTestId('waive').click();
    const dialog = page.getByTestId('waive-dialog');
    const matrixTitle = 'CANN × torch × torch_npu × Python match the official matrix';
    // the check by its title, its id after it (not the id alone)
    await expect(dialog.locator('h2')).toHaveText(`Waive ${matrixTitle} (env.version-matrix)`);
    await expect(dialog.getByTestId('waive-save')).toBeDisabled(); // a reason is required
    await dialog
      .getByTestId('waive-reason')
      .fill('torch_npu upgrade is scheduled with the CANN 8.5 rollout');
    await dialog.getByTestId('waive-by').fill('Wang Fang');
    await dialog.getByTestId('waive-save').click();
    await expect(matrix.getByTestId('waiver')).toContainText('Wang Fang');
    await expect(column.getByTestId('stage-status')).not.toHaveText('fail');
    // the session's history names the waived check as its card does; the id is its tooltip
    const waived = page.getByTestId('timeline-waiver');
    await expect(waived).toContainText(`${matrixTitle} on npu-env waived by Wang Fang`);
    await expect(waived).toHaveAttribute('title', 'env.version-matrix');

    // a second try on the same host; compared from the first session, the earlier session still
    // comes first and the change reads from it to the later one
    await page.getByTestId('nav-sessions').click();
    await page.getByTestId('open-new-session').click();
    await page.getByTestId('pick-host-npu-env').check();
    await page.getByTestId('session-title').fill('bring-up again');
    await page.getByTestId('session-create').click();
    await expect(page.getByTestId('session-title')).toHaveText('bring-up again');
    await column.getByTestId('run-stage').click();
    await expect(column.getByTestId('stage-status')).toHaveText('fail', { timeout: 30_000 });
    await page.getByTestId('nav-sessions').click();
    const ids = (
      await page
        .locator('[data-testid^="session-row-"]')
        .evaluateAll((rows) =>
          rows.map((r) => Number(r.getAttribute('data-testid')!.slice('session-row-'.length))),
        )
    ).sort((x, y) => x - y);
    expect(ids).toHaveLength(2);
    await page.getByTestId(`session-row-${ids[0]}`).click();
    await expect(page.getByTestId('session-title')).toHaveText('bring-up');
    await page.getByTestId('compare-with').selectOption(String(ids[1]));
    const heads = page.getByTestId('compare-table').locator('th');
    await expect(heads.nth(2)).toHaveText(`#${ids[0]}`);
    await expect(heads.nth(3)).toHaveText(`#${ids[1]}`);
    await expect(heads.nth(4)).toHaveText(`Change #${ids[0]} → #${ids[1]}`);
    // the waived failure of the first session is no longer waived in the second
    const matrixRow = page
      .getByTestId('compare-table')
      .locator('[data-testid$="-env.version-matrix"]');
    await expect(matrixRow).toHaveCount(1);
    // a check reads by its title, not its id
    await expect(matrixRow.locator('td').nth(1)).toHaveText(
      'CANN × torch × torch_npu × Python match the official matrix',
    );

    await page.getByTestId(`nav-sessions`).click();
    await page.getByTestId(`session-row-${ids[0]}`).click();
    await page.getByTestId('lang-zh-CN').click();
    await expect(matrix).toContainText('不适配 CANN 8.5.0');
    await expect(page.getByTestId('timeline-waiver')).toContainText(
      // a long check title reads as one name in quotes
      'npu-env 上的“CANN × torch × torch_npu × Python 与官方版本矩阵一致”已由 Wang Fang 豁免',
    );
  });
});

test('a stage has its own address that survives a reload; every stage is built, an unknown one says so, in both languages', async ({
  app,
}) => {
  const { page } = app;
  const shell = new Shell(page);
  await shell.ready();
  await shell.nav('sessions').click();
  await page.getByTestId('open-new-session').click();
  await page.getByTestId('session-title').fill('no hosts');
  await page.getByTestId('session-create').click();
  await expect(page.getByTestId('session-title')).toHaveText('no hosts');
  await expect(page).toHaveURL(/#\/sessions\/1$/);
  // no stage in the address: the first one this build has
  await expect(page.getByTestId('session-view')).toHaveAttribute('data-stage', 'env');

  // the rail marks no stage as unbuilt: the distributed stage, the last one built, opens
  const rail = page.getByTestId('progress-rail').locator('button');
  await expect(rail).toHaveCount(6);
  await expect(page.getByTestId('progress-rail').locator('button[data-built="false"]')).toHaveCount(
    0,
  );
  const distributed = page.getByTestId('stage-distributed');
  await expect(distributed).toBeEnabled();
  await expect(distributed).toContainText('Distributed (HCCL)');
  // an address naming a stage that does not exist says so (after a reload too)
  await page.evaluate("location.hash = '#/sessions/1/nosuchstage'");
  const unknown = page.getByTestId('stage-unknown');
  await expect(unknown).toContainText('nosuchstage');
  await page.reload();
  await shell.ready();
  await expect(unknown).toContainText('nosuchstage');
  await shell.language('zh-CN');
  await expect(distributed).toContainText('分布式（HCCL）');
  await expect(page.getByTestId('stage-not-built')).toHaveCount(0);

  // a built stage: clicking it puts it in the address, and a reload keeps it
  await page.getByTestId('stage-code').click();
  await expect(page).toHaveURL(/#\/sessions\/1\/code$/);
  await expect(page.getByTestId('code-stage')).toBeVisible();
  await page.reload();
  await shell.ready();
  await expect(page.getByTestId('session-view')).toHaveAttribute('data-stage', 'code');
  await expect(page.getByTestId('stage-code')).toHaveAttribute('aria-current', 'page');
  await expect(page.getByTestId('code-stage')).toBeVisible();
});
