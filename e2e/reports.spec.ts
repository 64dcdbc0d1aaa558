import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, expect } from './support/fixtures';
import { Shell } from './pages/shell';

test.describe('reports: preview, export, review, import', () => {
  let dir: string;
  test.beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'amw-e2e-report-'));
    cpSync(join(process.cwd(), 'tests/fixtures/code/nanogpt-ddp'), join(dir, 'nanogpt'), {
      recursive: true,
    });
  });
  test.afterEach(() => rmSync(dir, { recursive: true, force: true }));

  test('a session with a code scan: preview, comment and decide, export Markdown, import the JSON', async ({
    app,
  }) => {
    const { page } = app;
    await new Shell(page).ready();
    await new Shell(page).newSession('port nanoGPT');
    await page.getByTestId('nav-code').click();
    await page.getByTestId('scan-path').fill(join(dir, 'nanogpt'));
    await page.getByTestId('scan-session').selectOption({ label: '#1 port nanoGPT' });
    await page.getByTestId('scan-start').click();
    await expect(page.getByTestId('scan-review')).toBeVisible({ timeout: 30_000 });

    await page.getByTestId('nav-reports').click();
    await page.getByTestId('report-source').selectOption('s1');
    const preview = page.frameLocator('[data-testid=report-preview]');
    await expect(preview.locator('h1')).toContainText('port nanoGPT');
    await expect(preview.locator('[data-readiness]')).toHaveAttribute('data-readiness', 'blocked');

    // review: a comment on a finding's check, then a decision; both reach the preview
    // (each is signed: until a name is given the panel says so, and the buttons' tooltips too)
    await page.getByTestId('review-name').fill('');
    await expect(page.getByTestId('name-needed')).toContainText('Your name goes with each');
    await expect(page.getByTestId('review-request-changes')).toHaveAttribute(
      'title',
      /Your name goes with each/,
    );
    await page.getByTestId('review-name').fill('Li Si');
    await expect(page.getByTestId('name-needed')).toHaveCount(0);
    // a blocked session is not approved, and the panel says why; a request for changes waits
    // for its reason
    await expect(page.getByTestId('review-approve')).toBeDisabled();
    await expect(page.getByTestId('approve-unavailable')).toContainText(
      'Approve is not available: this session is blocked',
    );
    await expect(page.getByTestId('review-request-changes')).toBeDisabled();
    await expect(page.getByTestId('reason-needed')).toContainText('needs a reason');
    // what a comment is about reads as the check's title and where it ran, not as its id
    const nccl = page.locator(
      '[data-testid=review-target] option[value="check:dist.nccl@(local)"]',
    );
    await expect(nccl).toHaveText(/^[^:@]+ — this machine$/);
    // a finding reads as its place and its rule's title; the rule id is the option's tooltip
    const ncclFinding = page
      .locator('[data-testid=review-target] option[value^="finding:dist.nccl@train.py:"]')
      .first();
    await expect(ncclFinding).toHaveText(/^train\.py:\d+ · NCCL backend$/);
    await expect(ncclFinding).toHaveAttribute('title', 'dist.nccl');
    // grouped by stage and by file, not one long list
    const target = page.getByTestId('review-target');
    await expect(target.locator('optgroup[label="Checks not passed — Code"] option')).toContainText(
      [/NCCL backend/],
    );
    await expect(
      target.locator('optgroup[label="Code findings — train.py"] option').first(),
    ).toHaveText(/^train\.py:\d+ · /);
    await expect(page.getByTestId('decision-whole')).toHaveCount(0);
    await page.getByTestId('review-target').selectOption('check:dist.nccl@(local)');
    // a decision is not about what About names: the panel says so while something else is chosen
    await expect(page.getByTestId('decision-whole')).toBeVisible();
    await page.getByTestId('review-text').fill('Use HCCL and raise ulimit -l on every node.');
    await page.getByTestId('review-add').click();
    await expect(page.getByTestId('review-comments')).toContainText('raise ulimit -l');
    await expect(page.getByTestId('review-comments')).toContainText('— this machine');
    await expect(page.getByTestId('review-comments')).not.toContainText('check:dist.nccl@');
    await page.getByTestId('review-text').fill('Port the launcher first.');
    await expect(page.getByTestId('reason-needed')).toHaveCount(0);
    await page.getByTestId('review-request-changes').click();
    await expect(page.getByTestId('review-decision')).toContainText('changes requested');
    // the text went with the decision as its note: the box is empty again, and no time is raw
    await expect(page.getByTestId('review-decision')).toContainText('Port the launcher first.');
    await expect(page.getByTestId('review-text')).toHaveValue('');
    // the decision was about the session: About says so again, not the comment's check
    await expect(page.getByTestId('review-target')).toHaveValue('session');
    await expect(page.getByTestId('review-panel')).not.toContainText(
      /\d{4}-\d{2}-\d{2} \d{2}:\d{2}/,
    );
    await expect(preview.locator('#review')).toContainText('raise ulimit -l');
    // the About list reads in the language shown, the checks' titles too (they come with the
    // report the panel builds)
    const shell = new Shell(page);
    await shell.language('zh-CN');
    await expect(nccl).toHaveText('NCCL 后端 — 本机');
    // and so does the report's language, not picked here yet
    await expect(page.getByTestId('report-language')).toHaveValue('zh-CN');
    await expect(ncclFinding).toHaveText(/^train\.py:\d+ · NCCL 后端$/);
    await shell.language('en');
    await expect(nccl).toHaveText('NCCL backend — this machine');

    await page.getByTestId('report-format').selectOption('md');
    const [md] = await Promise.all([
      page.waitForEvent('download'),
      page.getByTestId('report-export').click(),
    ]);
    expect(md.suggestedFilename()).toBe('amw-report-1-port-nanogpt.md');
    const text = readFileSync((await md.path())!, 'utf8');
    expect(text).toContain('# Migration report: port nanoGPT');
    expect(text).toContain('raise ulimit -l');

    await page.getByTestId('report-format').selectOption('json');
    const [json] = await Promise.all([
      page.waitForEvent('download'),
      page.getByTestId('report-export').click(),
    ]);
    // the import button is a real button: focused and opened from the keyboard
    const importButton = page.getByTestId('report-import');
    await importButton.focus();
    await expect(importButton).toBeFocused();
    const chooser = page.waitForEvent('filechooser');
    await page.keyboard.press('Enter');
    await (await chooser).setFiles((await json.path())!);
    await expect(page.getByText('An imported report: read-only')).toBeVisible();
    await expect(preview.locator('h1')).toContainText('port nanoGPT');
    await expect(page.getByTestId('review-comments')).toContainText('raise ulimit -l');
  });

  test('zh-CN: the report page and the report speak Chinese', async ({ app }) => {
    const { page } = app;
    const shell = new Shell(page);
    await shell.ready();
    await shell.language('zh-CN');
    await shell.newSession('迁移 nanoGPT');
    await page.getByTestId('nav-reports').click();
    await page.getByTestId('report-source').selectOption('s1');
    const preview = page.frameLocator('[data-testid=report-preview]');
    await expect(preview.locator('h1')).toContainText('迁移报告');
    await expect(page.getByTestId('report-export')).toHaveText('导出');
    // nothing run yet: nothing to approve, and the panel says so; changes wait for their reason
    await page.getByTestId('review-name').fill('李四');
    await expect(page.getByTestId('review-approve')).toBeDisabled();
    await expect(page.getByTestId('approve-unavailable')).toHaveText(
      '暂时无法批准：此会话还没有运行任何阶段。请先运行一个阶段；现在可以先添加评论。',
    );
    await expect(page.getByTestId('review-request-changes')).toBeDisabled();
    await expect(page.getByTestId('reason-needed')).toHaveText(
      '要求修改需要理由：请在评论框中写明需要修改什么。',
    );
  });
});
