import { execFileSync } from 'node:child_process';
import { chownSync, cpSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { test, expect } from './support/fixtures';
import { Shell } from './pages/shell';
import { docShot } from './support/doc-shot';
import { simHostsSupported, startSimHost, type SimHost } from './hosts/sim-host';
import { REFERENCE } from '../tests/support/reference';

const support = simHostsSupported();
const F = join(REFERENCE, 'fixtures/profiling');

/** Waits for `done`, accepting the host key the run meets on the way (first contact). */
async function untilDone(page: Page, done: ReturnType<Page['getByTestId']>) {
  const hk = page.getByTestId('hostkey-dialog');
  for (let i = 0; i < 120; i++) {
    if (await done.isVisible()) return;
    if (await hk.isVisible()) await hk.getByTestId('hostkey-accept').click();
    await page.waitForTimeout(1000);
  }
  await expect(done).toBeVisible();
}

test.describe('profiling stage: run form and import form', () => {
  test.skip(!support.ok, support.ok ? '' : support.reason);
  test.setTimeout(300_000);
  let sim: SimHost;
  test.beforeAll(async () => {
    // Debian's CPU torch with a torch_npu stand-in that has no profiler: torch.profiler stands in
    sim = await startSimHost('e2e-prof', 'ascend-910b');
    const models = join(sim.dir, 'home', 'models');
    cpSync(join(process.cwd(), 'tests/fixtures/ops-models'), models, { recursive: true });
    const { uid, gid } = statSync(join(sim.dir, 'home'));
    chownSync(models, uid, gid);
    // a folder of torch_npu output left on the host, for the import from hosts
    const prof = join(sim.dir, 'home', 'prof');
    cpSync(join(F, 'torch_npu_megatron_rank0'), join(prof, 'node_rank0_ascend_pt'), {
      recursive: true,
    });
    execFileSync('chown', ['-R', `${uid}:${gid}`, prof]);
  });
  test.afterAll(async () => {
    await sim?.stop();
  });

  test('profile two ranks on a host from the form, then import a folder; both languages', async ({
    app,
  }) => {
    const { page } = app;
    const shell = new Shell(page);
    await shell.ready();
    await page.getByTestId('nav-hosts').click();
    await page.getByTestId('open-add-host').click();
    const d = page.getByTestId('add-host-dialog');
    await d.getByTestId('host-name').fill('npu');
    await d.getByTestId('host-hostname').fill(sim.host);
    await d.getByTestId('host-port').fill(String(sim.port));
    await d.getByTestId('host-username').fill(sim.user);
    await d.getByTestId('host-identityFile').fill(sim.clientKey);
    await d.getByTestId('host-save').click();
    await expect(page.getByTestId('host-title')).toHaveText('npu');
    await page.getByTestId('nav-sessions').click();
    await page.getByTestId('open-new-session').click();
    await page.getByTestId('pick-host-npu').check();
    await page.getByTestId('session-title').fill('profiling');
    await page.getByTestId('session-create').click();
    await page.getByTestId('stage-profiling').click();

    const form = page.getByTestId('profiling-form');
    await expect(form.getByTestId('profiling-host-npu')).toBeChecked();
    await form.getByTestId('profiling-entry').fill('models/models.py:attention');
    await expect(form.getByTestId('profiling-script')).toBeDisabled();
    await form.getByTestId('profiling-steps').fill('1');
    await form.getByTestId('profiling-ranks').fill('2');
    await form.getByTestId('profiling-run').click();
    const result = page.getByTestId('profiling-result');
    await untilDone(page, result);
    await expect(result).toContainText('(torch), 2 rank folder(s)');
    const warnings = page.getByTestId('profiling-warnings');
    await expect(warnings).toContainText(
      'npu: 0, 1 ranks launched with torchrun (--nproc_per_node 2, backend gloo)',
    );
    await expect(warnings).toContainText('torch.profiler on the CPU as a stand-in');

    await shell.language('zh-CN');
    await expect(result).toContainText('（torch），2 个 rank 目录');
    await expect(warnings).toContainText('用 torchrun 启动了 0, 1 个 rank');
    await expect(form.getByTestId('profiling-run')).toHaveText('运行性能采集');
    await shell.language('en');

    // import a folder on this machine: stored as a run of the session and shown
    const imp = page.getByTestId('profiling-import');
    await imp.getByTestId('profiling-import-dir').fill(join(F, 'torch_npu_level1_rank0_ascend_pt'));
    await imp.getByTestId('profiling-import-submit').click();
    await expect(result).toContainText('torch_npu_level1_rank0_ascend_pt (torch_npu)', {
      timeout: 60_000,
    });
    await expect(page.getByTestId('profiling-task-types')).toBeVisible();
    await expect(page.getByTestId('profiling-breakdown')).toBeVisible();
    await docShot(page, 'profiling-en');
    await shell.language('zh-CN');
    await expect(page.getByTestId('profiling-import-submit')).toHaveText('导入');
    await expect(page.getByTestId('profiling-task-types')).toContainText('任务类型');
    await docShot(page, 'profiling-zh-CN');
    await shell.language('en');

    // the same kind of folder on the host, copied over SFTP and read as one import
    await imp.getByTestId('profiling-import-where').selectOption('remote');
    await imp.getByTestId('profiling-import-dir').fill('prof');
    await imp.getByTestId('profiling-import-submit').click();
    await expect(result).toContainText('npu:prof (torch_npu), 1 rank folder(s)', {
      timeout: 60_000,
    });

    // an entry that does not run: no profile, the failed check says why
    await form.getByTestId('profiling-entry').fill('models/models.py:no_such_function');
    await form.getByTestId('profiling-ranks').fill('1');
    await form.getByTestId('profiling-run').click();
    await expect(page.getByTestId('profiling-checks')).toContainText(
      'The profiled run failed: AttributeError',
      { timeout: 120_000 },
    );
    await expect(page.getByTestId('profiling-result')).toBeHidden();
  });
});
