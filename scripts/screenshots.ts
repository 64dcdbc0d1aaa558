// README screenshots from a real `amw serve` in Debian Chromium, with simulated Ascend hosts when
// run as root: `node scripts/run-ts.mjs scripts/screenshots.ts [--all]`.
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Page } from '@playwright/test';
import { CHROMIUM_ARGS, chromiumPath } from '../e2e/support/chromium';
import {
  registerSimHost,
  simHostsSupported,
  startSimHost,
  type SimHost,
} from '../e2e/hosts/sim-host';
import { createCore } from '../electron/core/api/core';

const home = mkdtempSync(join(tmpdir(), 'amw-shots-'));
const sims: SimHost[] = [];
if (simHostsSupported().ok) {
  sims.push(
    await startSimHost('npu-a01', 'ascend-910b'),
    await startSimHost('npu-a02', 'ascend-910b'),
    await startSimHost('npu-a03', 'ascend-910b-old'),
    await startSimHost('infer-01', 'ascend-310p-duo'),
  );
  // seed the store through the engine, as a user would have: hosts added and inventoried
  const core = createCore({
    env: { AMW_HOME: home } as NodeJS.ProcessEnv,
    hostKeyPolicy: 'accept-new',
    userKnownHosts: [],
  });
  for (const s of sims) {
    await registerSimHost(core, s, { group: s.name.startsWith('npu') ? 'train-a' : 'infer' });
  }
  await core.jobs.wait((await core.call('fleet.inventory', {})).jobId);
  const session = await core.call('sessions.create', {
    title: 'rack A bring-up',
    hosts: ['npu-a01', 'npu-a03'],
  });
  for (const host of session.hosts) {
    await core.jobs.wait(
      (await core.call('stages.run', { host, stage: 'env', sessionId: session.id })).jobId,
    );
  }
  // an operator trace on npu-a01: the test models, copied into the host's home
  const a01 = sims[0]!;
  cpSync('tests/fixtures/ops-models', join(a01.dir, 'home', 'models'), { recursive: true });
  await core.jobs.wait(
    (
      await core.call('stages.run', {
        host: 'npu-a01',
        stage: 'ops',
        sessionId: session.id,
        entry: 'models/models.py:attention',
        backward: true,
      })
    ).jobId,
  );
  await core.close();
}

// a code scan to review: the nanoGPT-style fixture, copied so applying never touches the repo
const project = join(home, 'nanogpt');
cpSync('tests/fixtures/code/nanogpt-ddp', project, { recursive: true });
{
  const core = createCore({ env: { AMW_HOME: home } as NodeJS.ProcessEnv });
  await core.jobs.wait((await core.call('code.scan', { path: project })).jobId);
  await core.close();
}

const child = spawn(process.execPath, ['bin/amw.js', 'serve', '--port', '0'], {
  env: { ...process.env, AMW_HOME: home },
  stdio: ['ignore', 'pipe', 'ignore'],
});
const url = await new Promise<string>((resolve) => {
  let buf = '';
  child.stdout!.on('data', (d: Buffer) => {
    buf += String(d);
    if (buf.includes('\n')) resolve(buf.split('\n')[0]!.trim());
  });
});
const browser = await chromium.launch({ executablePath: chromiumPath(), args: CHROMIUM_ARGS });
const ready = (page: Page) =>
  page.locator('#root[data-app-state="ready"]').waitFor({ state: 'attached' });
try {
  const page = await browser.newPage({ viewport: { width: 1360, height: 820 } });
  await page.goto(url);
  await ready(page);
  await page.getByTestId('lang-zh-CN').click();
  if (sims.length) {
    await page.getByTestId('nav-hosts').click();
    await page.getByTestId('tab-fleet').click();
    await page.getByTestId('fleet-table').waitFor();
    await page.screenshot({ path: 'docs/screenshot.png' });
    if (process.argv.includes('--all')) {
      await page.getByTestId('lang-en').click();
      await page.getByTestId('tab-hosts').click();
      await page.screenshot({ path: 'test-results/hosts-en.png' });
      await page.getByTestId('host-row-infer-01').click();
      await page.getByTestId('chips-table').waitFor();
      await page.screenshot({ path: 'test-results/host-detail-en.png', fullPage: true });
      await page.getByTestId('nav-sessions').click();
      await page.getByTestId('sessions-table').locator('tr.clickable').first().click();
      await page.getByTestId('host-column-npu-a01').waitFor();
      await page.screenshot({ path: 'test-results/session-en.png', fullPage: true });
      await page.getByTestId('stage-ops').click();
      await page.getByTestId('ops-result').waitFor();
      await page.screenshot({ path: 'test-results/ops-en.png', fullPage: true });
      await page.getByTestId('nav-reports').click();
      await page.getByTestId('report-source').selectOption({ index: 1 });
      await page.frameLocator('[data-testid=report-preview]').locator('h1').waitFor();
      await page.screenshot({ path: 'test-results/reports-en.png' });
    }
  } else {
    await page.getByTestId('nav-settings').click();
    await page.screenshot({ path: 'docs/screenshot.png' });
  }
  // the code review in English, a finding explained on hover
  await page.getByTestId('lang-en').click();
  await page.getByTestId('nav-code').click();
  await page.getByTestId('scan-row').first().click();
  await page.locator('[data-testid=tree-file][data-file="train.py"]').click();
  await page.locator('[data-testid=diff-editor][data-ready=true]').waitFor();
  await page.getByTestId('hunk-next').click();
  const squiggle = page.locator('.squiggly-error').nth(3);
  const box = await squiggle.boundingBox();
  if (box) await page.mouse.move(box.x + 6, box.y + box.height / 2);
  await page.waitForTimeout(1200);
  await page.screenshot({ path: 'docs/code-review.png' });
} finally {
  await browser.close();
  child.kill('SIGINT');
  await Promise.all(sims.map((s) => s.stop()));
  rmSync(home, { recursive: true, force: true });
}
