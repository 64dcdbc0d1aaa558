// Takes the README screenshots from a real `amw serve` in Debian Chromium: `node scripts/screenshots.mjs`.
/* global document */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from '@playwright/test';

const home = mkdtempSync(join(tmpdir(), 'amw-shots-'));
const child = spawn(process.execPath, ['bin/amw.js', 'serve', '--port', '0'], {
  env: { ...process.env, AMW_HOME: home },
  stdio: ['ignore', 'pipe', 'ignore'],
});
const url = await new Promise((resolve) => {
  let buf = '';
  child.stdout.on('data', (d) => {
    buf += d;
    if (buf.includes('\n')) resolve(buf.split('\n')[0].trim());
  });
});
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
    '--disable-quic',
  ],
});
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 760 } });
  await page.goto(url);
  await page.locator('#root[data-app-state="ready"]').waitFor({ state: 'attached' });
  const shots = process.argv.slice(2);
  // The main screenshot: zh-CN settings with finished jobs in the drawer.
  await page.getByTestId('lang-zh-CN').click();
  await page.getByTestId('nav-settings').click();
  await page.getByTestId('start-backup').click();
  await page.getByTestId('start-check').click();
  await page.getByTestId('job').nth(1).waitFor();
  await page.waitForFunction(() =>
    [...document.querySelectorAll('[data-testid=job]')].every(
      (j) => j.getAttribute('data-status') === 'succeeded',
    ),
  );
  await page.screenshot({ path: 'docs/screenshot.png' });
  if (shots.includes('--all')) {
    await page.getByTestId('lang-en').click();
    await page.getByTestId('jobs-toggle').click();
    await page.getByTestId('nav-hosts').click();
    await page.screenshot({ path: 'test-results/hosts-en.png' });
  }
} finally {
  await browser.close();
  child.kill('SIGINT');
  rmSync(home, { recursive: true, force: true });
}
