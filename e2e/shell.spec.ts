import { join } from 'node:path';
import Database from 'better-sqlite3';
import { test, expect } from './support/fixtures';
import { Shell } from './pages/shell';

test('loads the shell with every page and a useful empty state', async ({ app }) => {
  const shell = new Shell(app.page);
  await shell.ready();
  await expect(shell.appName()).toHaveText('Ascend Migration Workbench');
  for (const page of ['hosts', 'sessions', 'code', 'reports'] as const) {
    await shell.nav(page).click();
    const section = app.page.getByTestId(`page-${page}`);
    await expect(section).toBeVisible();
    // an empty state explains what the page will do and how to start
    await expect(section.locator('.lead')).not.toBeEmpty();
    await expect(section.locator('.steps li')).toHaveCount(3);
  }
  await shell.nav('settings').click();
  await expect(app.page.getByTestId('app-info')).toContainText(app.home);
});

test('switches to zh-CN and back, and remembers the choice after a reload', async ({ app }) => {
  const shell = new Shell(app.page);
  await shell.ready();
  await shell.language('zh-CN');
  await expect(shell.appName()).toHaveText('昇腾迁移工作台');
  await expect(shell.nav('hosts')).toHaveText('主机');
  await expect(app.page.locator('html')).toHaveAttribute('lang', 'zh-CN');

  await app.page.reload();
  await shell.ready();
  await expect(shell.appName()).toHaveText('昇腾迁移工作台');

  await shell.language('en');
  await expect(shell.nav('sessions')).toHaveText('Sessions');
});

test('theme toggles between light and dark and is remembered', async ({ app }) => {
  const shell = new Shell(app.page);
  await shell.ready();
  const html = app.page.locator('html');
  const before = await html.getAttribute('data-theme');
  await app.page.getByTestId('theme-toggle').click();
  const after = before === 'dark' ? 'light' : 'dark';
  await expect(html).toHaveAttribute('data-theme', after);
  await app.page.reload();
  await shell.ready();
  await expect(html).toHaveAttribute('data-theme', after);
});

test('jobs drawer shows a database backup and a check from start to finish', async ({ app }) => {
  const shell = new Shell(app.page);
  await shell.ready();
  await shell.nav('settings').click();
  await app.page.getByTestId('start-backup').click();
  const drawer = shell.jobsDrawer();
  await expect(drawer).toBeVisible();
  const job = drawer.getByTestId('job').first();
  await expect(job).toContainText('Database backup');
  await expect(job).toHaveAttribute('data-status', 'succeeded');
  await expect(job.getByTestId('job-status')).toHaveText('Done');
  // and where the copy went
  await expect(job).toContainText(/Written to \/\S+\/backups\/amw-[\dT-]+Z\.db/);

  await app.page.getByTestId('start-check').click();
  await expect(drawer.getByTestId('job')).toHaveCount(2);
  await expect(drawer.getByTestId('job').first()).toContainText('Database check');
  await expect(drawer.getByTestId('job').first()).toHaveAttribute('data-status', 'succeeded');

  // the drawer speaks the chosen language too
  await shell.language('zh-CN');
  await expect(drawer.getByTestId('job').first()).toContainText('数据库检查');
  await expect(drawer.getByTestId('job').first().getByTestId('job-status')).toHaveText('已完成');

  // Escape puts it away, as it does a dialog, and the page under it is reachable again
  await app.page.keyboard.press('Escape');
  await expect(drawer).toBeHidden();
});

test('settings say on the page where the backup went and what the check found, in both languages', async ({
  app,
}) => {
  const { page } = app;
  const shell = new Shell(page);
  await shell.ready();
  await shell.nav('settings').click();
  await page.getByTestId('start-backup').click();
  const backup = page.getByTestId('backup-result');
  await expect(backup).toHaveAttribute('data-status', 'succeeded');
  await expect(backup).toHaveText(
    /^Backup written to \/\S+\/backups\/amw-[\dT-]+Z\.db \([\d,]+ bytes\)\.$/,
  );
  // the drawer opened with the job: the result is beside it, not under it
  const drawer = await page.getByTestId('jobs-drawer').boundingBox();
  const shown = await backup.boundingBox();
  expect(shown!.x + shown!.width).toBeLessThanOrEqual(drawer!.x);
  await page.keyboard.press('Escape'); // the page says it too

  const check = page.getByTestId('check-result');
  await page.getByTestId('start-check').click();
  await expect(check).toHaveAttribute('data-status', 'succeeded');
  await expect(check).toHaveText(
    'Database OK: its integrity and references check out, and 0 evidence files match their checksums.',
  );
  // an evidence file the database names but the disk lost: the next check says so
  const db = new Database(join(app.home, 'amw.db'));
  db.prepare(
    "INSERT INTO artifacts (sha256, kind, size, created_at) VALUES (?, 'profile', 1, '2026-12-07T00:00:00Z')",
  ).run('0'.repeat(64));
  db.close();
  await page.getByTestId('start-check').click();
  await expect(check).toContainText(
    'The check found problems: 0 integrity, 0 reference, 1 missing and 0 damaged evidence files.',
  );
  // …and names it: what it held and where it should be
  await expect(page.getByTestId('check-files')).toHaveText(
    `Missing: a profile: ${join(app.home, 'artifacts', '00', '0'.repeat(64))}`,
  );
  await shell.language('zh-CN');
  await expect(check).toContainText(
    '检查发现问题：完整性 0 项，引用 0 项，缺失证据文件 1 个，损坏 0 个。',
  );
  await expect(backup).toContainText('备份已写入 ');
});

test('without the token the server answers 401 and shows no app', async ({
  app,
  browser,
}, testInfo) => {
  test.skip(testInfo.project.name !== 'serve', 'serve mode only: the desktop app has no token');
  const origin = new URL(app.url!).origin;
  const context = await browser.newContext();
  const page = await context.newPage();
  const res = await page.goto(`${origin}/`);
  expect(res?.status()).toBe(401);
  await expect(page.locator('body')).toContainText('Unauthorized');
  await expect(page.locator('#root')).toHaveCount(0);
  await context.close();
});
