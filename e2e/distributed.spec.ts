import { test, expect } from './support/fixtures';
import { Shell } from './pages/shell';
import { simHostsSupported, startSimHost, type SimHost } from './hosts/sim-host';

const support = simHostsSupported();

// Two simulated hosts with a stub hccn_tool (a test double): one is healthy, the other has NPU 3's
// link DOWN and its TLS switch on where the first has it off.
test.describe('distributed (HCCL) stage', () => {
  test.skip(!support.ok, support.ok ? '' : support.reason);
  const sims: SimHost[] = [];
  test.beforeAll(async () => {
    sims.push(
      await startSimHost('e2e-dist-a', 'hccn-ok'),
      await startSimHost('e2e-dist-b', 'hccn-faults'),
    );
  });
  test.afterAll(async () => {
    await Promise.all(sims.map((s) => s.stop()));
  });

  test('check a fleet: the matrix, a cell’s evidence, the link grid and what disagrees', async ({
    app,
  }) => {
    test.setTimeout(120_000);
    const { page } = app;
    const shell = new Shell(page);
    await shell.ready();
    for (const [name, sim] of [
      ['npu-a', sims[0]!],
      ['npu-b', sims[1]!],
    ] as const) {
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
    await page.getByTestId('nav-sessions').click();
    await page.getByTestId('open-new-session').click();
    await page.getByTestId('pick-host-npu-a').check();
    await page.getByTestId('pick-host-npu-b').check();
    await page.getByTestId('session-title').fill('fleet');
    await page.getByTestId('session-create').click();
    await page.getByTestId('stage-distributed').click();
    const stage = page.getByTestId('distributed-stage');
    await expect(stage.getByTestId('dist-pick-npu-a')).toBeChecked();
    await stage.getByTestId('dist-collective').uncheck();
    await stage.getByTestId('run-stage').click();
    // first contact with each host: confirm its key (the probes run side by side)
    for (let i = 0; i < 2; i++) {
      const hk = page.getByTestId('hostkey-dialog');
      await expect(hk).toBeVisible({ timeout: 30_000 });
      await hk.getByTestId('hostkey-accept').click();
    }
    const link = stage.getByTestId('dist-cell-npu-b-dist.link');
    await expect(link).toHaveAttribute('data-status', 'fail', { timeout: 60_000 });
    await expect(stage.getByTestId('dist-cell-npu-a-dist.link')).toHaveAttribute(
      'data-status',
      'pass',
    );
    await link.click();
    const evidence = stage.getByTestId('dist-evidence');
    await expect(evidence).toContainText('NPU 3: link DOWN.');
    await expect(evidence).toContainText('hccn_tool -i 3 -link_stat -g');
    await expect(stage.getByTestId('dist-device-npu-b-3')).toHaveAttribute('data-status', 'fail');
    await expect(stage.getByTestId('dist-device-npu-a-3')).toHaveAttribute('data-status', 'pass');
    const tls = stage.getByTestId('dist-disagree-tls');
    await expect(tls).toContainText('0');
    await expect(tls).toContainText('1');
    await expect(stage.getByTestId('dist-outcome-dist.rank-table')).toContainText(
      'one was generated from the inventories (2 servers, 16 ranks',
    );
    await shell.language('zh-CN');
    await expect(evidence).toContainText('NPU 3：链路 DOWN。');
    await expect(stage.getByTestId('distributed-disagree')).toContainText('不一致的取值');
  });
});
