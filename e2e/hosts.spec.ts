import type { Page } from '@playwright/test';
import { test, expect } from './support/fixtures';
import { Shell } from './pages/shell';
import { simHostsSupported, startSimHost, type SimHost } from './hosts/sim-host';

const support = simHostsSupported();

test.describe('hosts', () => {
  test.skip(!support.ok, support.ok ? '' : support.reason);
  const sims: SimHost[] = [];
  test.afterAll(async () => {
    await Promise.all(sims.map((s) => s.stop()));
  });

  async function addHost(page: Page, sim: SimHost, name: string, group = '') {
    await page.getByTestId('open-add-host').click();
    const d = page.getByTestId('add-host-dialog');
    await d.getByTestId('host-name').fill(name);
    await d.getByTestId('host-hostname').fill(sim.host);
    await d.getByTestId('host-port').fill(String(sim.port));
    await d.getByTestId('host-username').fill(sim.user);
    await d.getByTestId('host-identityFile').fill(sim.clientKey);
    if (group) await d.getByTestId('host-group').fill(group);
    await d.getByTestId('host-save').click();
    await expect(page.getByTestId('host-title')).toHaveText(name);
    // a host reached over SSH may need a password (this machine, `local`, never does)
    await expect(page.getByTestId('host-password')).toBeVisible();
    // and can be edited or removed (`local` can do neither)
    await expect(page.getByTestId('host-edit')).toBeVisible();
    await expect(page.getByTestId('host-remove')).toBeVisible();
  }

  test('add a host, confirm its key, see its chips and versions', async ({ app }) => {
    const sim = await startSimHost('e2e-910b', 'ascend-910b');
    sims.push(sim);
    const { page } = app;
    await new Shell(page).ready();
    await page.getByTestId('nav-hosts').click();

    // the form checks input as the engine would
    await page.getByTestId('open-add-host').click();
    await page.getByTestId('host-name').fill('bad name!');
    await page.getByTestId('host-save').click();
    await expect(page.getByTestId('add-host-dialog').locator('.error').first()).toBeVisible();
    await page.getByTestId('add-host-dialog').getByRole('button', { name: 'Cancel' }).click();

    await addHost(page, sim, 'npu-a');
    await page.getByTestId('host-inventory').click();
    const dialog = page.getByTestId('hostkey-dialog');
    await expect(dialog.getByTestId('hostkey-fingerprint')).toHaveText(sim.hostKeyFingerprint);
    await expect(dialog.getByTestId('hostkey-type')).toHaveText('ssh-ed25519');
    await dialog.getByTestId('hostkey-accept').click();

    await expect(page.getByTestId('chip-row')).toHaveCount(8);
    await expect(page.getByTestId('chips-table')).toContainText('910B4');
    // each heading stands over its column (a flex rule for badges once laid them out apart)
    const lefts = (cells: string) =>
      page
        .getByTestId('chips-table')
        .locator(cells)
        .evaluateAll((els) => els.map((e) => Math.round(e.getBoundingClientRect().left)));
    expect(await lefts('tbody tr:first-child td')).toEqual(await lefts('thead th'));
    await expect(page.getByTestId('version-cann')).toHaveText('8.1.RC1');
    await expect(page.getByTestId('version-driver')).toHaveText('25.0.rc1.1');

    await page.getByTestId('host-test').click();
    await expect(page.getByTestId('test-result')).toHaveAttribute('data-ok', 'true');
    await page.getByTestId('nav-hosts').click();
    await expect(page.getByTestId('host-row-npu-a')).toContainText('8 × 910B4');
  });

  test('a changed host key is refused and explained, with both fingerprints', async ({ app }) => {
    const sim = await startSimHost('e2e-rot', 'ascend-310p-duo');
    sims.push(sim);
    const { page } = app;
    await new Shell(page).ready();
    await page.getByTestId('nav-hosts').click();
    await addHost(page, sim, 'duo');
    await page.getByTestId('host-test').click();
    await page.getByTestId('hostkey-accept').click();
    await expect(page.getByTestId('test-result')).toHaveAttribute('data-ok', 'true');
    const stored = sim.hostKeyFingerprint;

    await sim.rotateHostKey();
    await page.getByTestId('host-test').click();
    const result = page.getByTestId('test-result');
    await expect(result).toHaveAttribute('data-ok', 'false');
    await expect(result.getByTestId('error-text')).toHaveAttribute(
      'data-code',
      'HOST_KEY_MISMATCH',
    );
    await expect(result).toContainText('The host key changed');
    await expect(result.getByTestId('mismatch-facts')).toContainText(stored);
    await expect(result.getByTestId('mismatch-facts')).toContainText(sim.hostKeyFingerprint);
    await expect(page.getByTestId('hostkey-dialog')).toHaveCount(0); // no one-click override
  });

  test('the fleet table flags a version difference', async ({ app }) => {
    const a = await startSimHost('e2e-f1', 'ascend-910b');
    const b = await startSimHost('e2e-f2', 'ascend-910b');
    const c = await startSimHost('e2e-f3', 'ascend-910b-old');
    sims.push(a, b, c);
    const { page } = app;
    await new Shell(page).ready();
    await page.getByTestId('nav-hosts').click();
    await addHost(page, a, 'f1', 'rack-1');
    await page.getByTestId('nav-hosts').click();
    await addHost(page, b, 'f2', 'rack-1');
    await page.getByTestId('nav-hosts').click();
    await addHost(page, c, 'f3', 'rack-1');
    await page.getByTestId('nav-hosts').click();
    await page.getByTestId('tab-fleet').click();
    await page.getByTestId('fleet-inventory').click();
    for (let i = 0; i < 3; i++) await page.getByTestId('hostkey-accept').click();
    await expect(page.getByTestId('fleet-row-f3')).toBeVisible();
    await expect(page.getByTestId('fleet-f3-cann')).toHaveAttribute('data-differs', 'true');
    await expect(page.getByTestId('fleet-f3-cann')).toHaveText('8.0.0');
    await expect(page.getByTestId('fleet-f1-cann')).not.toHaveAttribute('data-differs', 'true');
    await expect(page.getByTestId('fleet-f3-chip')).toHaveText('910ProB');
  });
});

test.describe('live views', () => {
  test.skip(!support.ok, support.ok ? '' : support.reason);
  let sim: SimHost;
  test.beforeAll(async () => {
    sim = await startSimHost('e2e-live', 'ascend-910b');
  });
  test.afterAll(async () => {
    await sim.stop();
  });

  test('monitor charts every chip, and a terminal runs commands', async ({ app }) => {
    const { page } = app;
    await new Shell(page).ready();
    await page.getByTestId('nav-hosts').click();
    await page.getByTestId('open-add-host').click();
    const d = page.getByTestId('add-host-dialog');
    await d.getByTestId('host-name').fill('live');
    await d.getByTestId('host-hostname').fill(sim.host);
    await d.getByTestId('host-port').fill(String(sim.port));
    await d.getByTestId('host-username').fill(sim.user);
    await d.getByTestId('host-identityFile').fill(sim.clientKey);
    await d.getByTestId('host-save').click();

    await page.getByTestId('host-tab-monitor').click();
    await page.getByTestId('monitor-toggle').click();
    await page.getByTestId('hostkey-accept').click();
    await expect(page.getByTestId('monitor-chip')).toHaveCount(8);
    await expect(page.getByTestId('monitor-state')).toContainText('2 readings', {
      timeout: 15_000,
    });
    await page.getByTestId('monitor-toggle').click();
    await expect(page.getByTestId('monitor-state')).toHaveText('');

    await page.getByTestId('host-tab-terminal').click();
    const term = page.getByTestId('terminal');
    await expect(term.locator('.xterm-rows')).toContainText('amw-sim@', { timeout: 15_000 });
    await term.click();
    await page.keyboard.type('echo npu=$((4*2))');
    await page.keyboard.press('Enter');
    await expect(term.locator('.xterm-rows')).toContainText('npu=8');
    await page.keyboard.type('exit');
    await page.keyboard.press('Enter');
    await expect(page.getByTestId('terminal-exited')).toBeVisible();
  });
});
