import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test as base, _electron, expect, type Page } from '@playwright/test';
import { electronRuntime } from './electron-runtime';

export interface AppFixture {
  /** The app's window (Electron) or a browser tab on `amw serve`. */
  page: Page;
  /** serve: the printed URL with its token; electron: undefined. */
  url?: string;
  /** The data directory of this run. */
  home: string;
}

async function startServe(home: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['bin/amw.js', 'serve', '--port', '0'], {
    env: { ...process.env, AMW_HOME: home, LANG: 'en_US.UTF-8' },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let buf = '';
    child.stdout!.on('data', (d: Buffer) => {
      buf += String(d);
      const nl = buf.indexOf('\n');
      if (nl >= 0) resolve(buf.slice(0, nl).trim());
    });
    child.once('exit', (code) => reject(new Error(`amw serve exited with ${code}`)));
  });
  return { child, url };
}

/** Each test gets its own data directory and its own engine: no state leaks between tests. */
export const test = base.extend<{ app: AppFixture }>({
  app: async ({ browser }, use, testInfo) => {
    const home = mkdtempSync(join(tmpdir(), 'amw-e2e-'));
    try {
      if (testInfo.project.name === 'electron') {
        const runtime = electronRuntime();
        test.skip('skip' in runtime, 'skip' in runtime ? runtime.skip : '');
        if (!('path' in runtime)) return;
        const app = await _electron.launch({
          executablePath: runtime.path,
          args: ['dist/main.js'],
          env: { ...process.env, AMW_HOME: home },
        });
        const page = await app.firstWindow();
        await use({ page, home });
        await app.close();
        return;
      }
      const { child, url } = await startServe(home);
      const context = await browser.newContext();
      // the strict CSP's reports: a blocked script, style or eval probe is a regression even where
      // the page copes with it (none reaches the console)
      // (browser code, given as text: this project's e2e types have no DOM)
      await context.addInitScript({
        content: `window.__cspViolations = [];
document.addEventListener('securitypolicyviolation', (e) =>
  window.__cspViolations.push(e.violatedDirective + ' ' + e.blockedURI + ' at ' + e.sourceFile + ':' + e.lineNumber));`,
      });
      const page = await context.newPage();
      await page.goto(url);
      await use({ page, url, home });
      const violations = await page
        .evaluate<string[]>('window.__cspViolations || []')
        .catch(() => [] as string[]);
      await context.close();
      child.kill('SIGINT');
      await new Promise((r) => child.once('exit', r));
      expect(violations, 'Content-Security-Policy violations on the page').toEqual([]);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  },
});

export { expect };
