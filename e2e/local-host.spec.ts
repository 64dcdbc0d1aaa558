import { test, expect } from './support/fixtures';
import { Shell } from './pages/shell';

// The machine running `amw serve` as the host "local": no SSH, no host-key prompt. This CI
// machine has no NPU, and the inventory says so.
test('this machine: inventory without SSH or a host-key prompt, then listed with the hosts', async ({
  app,
}) => {
  const { page } = app;
  await new Shell(page).ready();
  await page.getByTestId('nav-hosts').click();
  await page.getByTestId('open-local-host').click();
  await expect(page.getByTestId('host-title')).toHaveText('This machine');
  // this machine needs no SSH password: none is asked for
  await expect(page.getByTestId('host-detail')).toContainText('this machine, no SSH');
  await expect(page.getByTestId('host-password')).toHaveCount(0);
  // nor an Edit dialog of SSH fields: it has no address, port, user or key
  await expect(page.getByTestId('host-edit')).toHaveCount(0);
  // nor a Remove button: this machine is always there
  await expect(page.getByTestId('host-remove')).toHaveCount(0);
  await page.getByTestId('host-inventory').click();
  await expect(page.getByTestId('inventory-view')).toContainText('npu-smi was not found', {
    timeout: 30_000,
  });
  await expect(page.getByTestId('version-cann')).toHaveText('—');
  await expect(page.getByTestId('hostkey-dialog')).toHaveCount(0);
  // the job that took it names this machine in words, not by the name `local`
  await page.getByTestId('jobs-toggle').click();
  const jobs = new Shell(page).jobsDrawer();
  await expect(jobs.getByTestId('job').first()).toContainText('Inventory of this machine stored');
  await page.getByTestId('jobs-toggle').click();
  await page.getByTestId('nav-hosts').click();
  await expect(page.getByTestId('host-row-local')).toContainText('this machine, no SSH');
  await expect(page.getByTestId('host-row-local')).toContainText('no NPU');
  // no health reading without an NPU: a dash, like the other empty columns, not a blank
  await expect(page.getByTestId('host-row-local').locator('td').nth(3)).toHaveText('—');

  // its monitor runs here without SSH (this machine has no npu-smi: it says so); a terminal is
  // the user's own, so none is offered
  await page.getByTestId('host-row-local').click();
  await expect(page.getByTestId('host-tab-terminal')).toHaveCount(0);
  await page.getByTestId('host-tab-monitor').click();
  await page.getByTestId('monitor-toggle').click();
  await expect(page.getByTestId('monitor')).toContainText('no Ascend driver is installed');
  await expect(page.getByTestId('monitor')).not.toContainText('Some input is not valid');
});
