import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, expect } from './support/fixtures';
import { Shell } from './pages/shell';

// Real lines from ../shared/knowledge/ascend-host-formats.md §4.1 and ascend-distributed.md §5.2
const LOG = [
  'ImportError: libhccl.so: cannot open shared object file: No such file or directory. Please check that the cann package is installed.',
  'step 1',
  'EI0006: 2024-08-05-18:15:21.270.506 Getting socket times out. Reason: Remote Rank did not send the data in time. Please check the reason for the rank being stuck',
].join('\n');

test.describe('doctor: paste a log, pick a file, name a folder', () => {
  test('pasted log: failures in order, causes switch language with the UI', async ({ app }) => {
    const { page } = app;
    await new Shell(page).ready();
    await page.getByTestId('nav-doctor').click();
    await expect(page.getByTestId('doctor-clear')).toBeDisabled();
    await page.getByTestId('doctor-text').fill(LOG);
    await page.getByTestId('doctor-run').click();
    const matches = page.getByTestId('doctor-match');
    await expect(matches).toHaveCount(2);
    await expect(matches.nth(0)).toHaveAttribute('data-rule', 'cann-not-sourced');
    await expect(matches.nth(1)).toHaveAttribute('data-rule', 'hccl-socket-timeout');
    await expect(matches.nth(1).getByTestId('doctor-cause')).toContainText('HCCL_CONNECT_TIMEOUT');
    await page.getByTestId('lang-zh-CN').click();
    await expect(matches.nth(1).getByTestId('doctor-cause')).toContainText('对端 rank');
    await page.getByTestId('lang-en').click();
    // Clear empties the text and the diagnosis, then has nothing more to do
    await page.getByTestId('doctor-clear').click();
    await expect(page.getByTestId('doctor-text')).toHaveValue('');
    await expect(matches).toHaveCount(0);
    await expect(page.getByTestId('doctor-clear')).toBeDisabled();
  });

  test('a picked file and a folder without logs', async ({ app }) => {
    const { page } = app;
    const dir = mkdtempSync(join(tmpdir(), 'amw-e2e-doctor-'));
    try {
      const file = join(dir, 'run.log');
      writeFileSync(file, `ok\n${LOG}\n`);
      await new Shell(page).ready();
      await page.getByTestId('nav-doctor').click();
      // the file button is a real button: focused and opened from the keyboard
      const pick = page.getByTestId('doctor-pick');
      await pick.focus();
      await expect(pick).toBeFocused();
      const chooser = page.waitForEvent('filechooser');
      await page.keyboard.press('Enter');
      await (await chooser).setFiles(file);
      await expect(page.getByTestId('doctor-match')).toHaveCount(2);
      await expect(page.getByTestId('doctor-match').first()).toContainText('line 2');

      const empty = join(dir, 'weights');
      mkdirSync(empty);
      writeFileSync(join(empty, 'model.bin'), 'x');
      await page.getByTestId('doctor-path').fill(empty);
      await page.getByTestId('doctor-run-path').click();
      await expect(page.getByTestId('doctor-notice')).toContainText('No log files');
      await expect(page.getByTestId('doctor-none')).toBeVisible();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('unported CUDA code: the code-stage failure with its commands as code; unknown errors are not a clean bill', async ({
    app,
  }) => {
    const { page } = app;
    await new Shell(page).ready();
    await page.getByTestId('nav-doctor').click();
    // what PyTorch without CUDA prints for `.cuda()` (the quoted source line is not a second failure)
    await page
      .getByTestId('doctor-text')
      .fill(
        [
          'Traceback (most recent call last):',
          '  File "/usr/lib/python3/dist-packages/torch/cuda/__init__.py", line 221, in _lazy_init',
          '    raise AssertionError("Torch not compiled with CUDA enabled")',
          'AssertionError: Torch not compiled with CUDA enabled',
        ].join('\n'),
      );
    await page.getByTestId('doctor-run').click();
    const match = page.getByTestId('doctor-match');
    await expect(match).toHaveCount(1);
    await expect(match).toHaveAttribute('data-rule', 'cuda-call-on-npu-host');
    await expect(match.getByTestId('doctor-fix').locator('code').first()).toHaveText(
      'amw scan <folder>',
    );
    await expect(match.getByTestId('doctor-fix')).not.toContainText('`');
    // what proves it names the stage in words and the command as code
    await expect(match).toContainText('the Code stage');
    await expect(match.locator('code', { hasText: 'amw scan .' })).toHaveCount(1);
    await page.getByTestId('lang-zh-CN').click();
    await expect(match).toContainText('原因：');
    await page.getByTestId('lang-en').click();

    await page.getByTestId('doctor-text').fill('step 1\nValueError: shapes (3,) and (4,) differ');
    await page.getByTestId('doctor-run').click();
    await expect(page.getByTestId('doctor-none')).toContainText('1 line looks like an error');
    await expect(page.getByTestId('doctor-none')).toHaveClass(/warn/);
    await expect(page.getByTestId('doctor-unmatched')).toContainText('ValueError');
  });
});
