// Diff view figures: `amw serve` with a scan holding a 10k-line Python file (500 proposed changes),
// opened in Debian's Chromium; prints how long the diff takes to show — from the click in the
// file tree to the first frame that shows it, fetching the file included — the first time in a
// freshly loaded page, and again (the file cached, the page's code warm).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS, chromiumPath } from '../electron/core/reports/chromium';
import { createCore } from '../electron/core/api/core';

const home = mkdtempSync(join(tmpdir(), 'amw-bench-diff-'));
const project = join(home, 'project');
mkdirSync(project);
const block = (i: number) =>
  [
    `def layer_${i}(x, w):`,
    `    """Layer ${i}: a projection and a residual."""`,
    '    y = x @ w',
    '    y = torch.relu(y)',
    '    z = y.cuda()',
    ...Array.from({ length: 14 }, (_, k) => `    y = y + ${k} * z  # step ${k}`),
    '',
  ].join('\n');
const big = `import torch\n\n${Array.from({ length: 500 }, (_, i) => block(i)).join('\n')}`;
writeFileSync(join(project, 'big_model.py'), big);
writeFileSync(join(project, 'small.py'), 'import torch\nx = torch.zeros(1).cuda()\n');
const core = createCore({ home });
const scanId = (
  (await core.jobs.wait((await core.call('code.scan', { path: project })).jobId)).result as {
    scanId: number;
  }
).scanId;
await core.close();

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
try {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  await page.goto(`${url}#/code/${scanId}/small.py`);
  const editor = page.locator('[data-testid=diff-editor][data-ready=true]');
  await editor.waitFor({ timeout: 60_000 });
  const open = async (file: string) => {
    await page.locator(`[data-testid=tree-file][data-file="${file}"]`).click();
    await editor.waitFor({ timeout: 60_000 });
    return Number(await page.getByTestId('diff-editor').getAttribute('data-diff-ms'));
  };
  const first = await open('big_model.py');
  const warm: number[] = [];
  for (let i = 0; i < 5; i++) {
    await open('small.py');
    warm.push(await open('big_model.py'));
  }
  warm.sort((a, b) => a - b);
  console.log(`diff view: ${big.split('\n').length} lines, 500 changes, click → diff on screen`);
  console.log(
    `  first open ${first} ms; opened again: median ${warm[2]} ms (min ${warm[0]}, max ${warm[4]})`,
  );
} finally {
  await browser.close();
  child.kill('SIGINT');
  rmSync(home, { recursive: true, force: true });
}
