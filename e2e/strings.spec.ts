import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { test, expect } from './support/fixtures';
import { Shell } from './pages/shell';

/**
 * Every page and dialog, in both languages: no raw i18n key (`a.b.c`, `ns:key`), no English
 * sentence in zh-CN, no Chinese in en. Code, paths and inputs are what the user typed or the
 * machine said, and text marked with its own `lang` is in that language on purpose.
 */
async function visibleText(page: Page): Promise<string[]> {
  // runs in the page: a string, since the e2e is type-checked without DOM types
  return page.evaluate(`(() => {
    const skip = 'code, pre, kbd, input, textarea, script, style, [lang]:not(html), .monaco-editor';
    const out = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const el = n.parentElement;
      if (!el || el.closest(skip)) continue;
      const box = el.getBoundingClientRect();
      if (!box.width && !box.height) continue;
      const text = (n.textContent || '').trim();
      if (text) out.push(text);
    }
    for (const el of document.querySelectorAll('[title], [placeholder], [aria-label]')) {
      if (el.closest(skip.replace('input, textarea, ', ''))) continue;
      for (const a of ['title', 'aria-label']) {
        const v = el.getAttribute(a);
        if (v) out.push(v);
      }
    }
    return out;
  })()`);
}

const RAW_KEY = /(^|[\s(（"“])[a-z][a-zA-Z0-9]*(\.[a-zA-Z_][a-zA-Z0-9_]*){2,}($|[\s)）"”.,:;])/;
const NS_KEY = /\b(stage-[a-z]+|rules|knowledge):[a-zA-Z]/;
const ENGLISH_SENTENCE = /[A-Za-z]{3,}(\s+[A-Za-z]{2,}){3,}/;
const MACHINE_WORD = /^(pass|warn|warning|error|fail|skip|none|fixed|regressed)$/i;
const QUOTED = /“[^”]*”/g;
const CHINESE = /[\u3400-\u9fff\uff01-\uff5e]/;

async function check(page: Page, lang: 'en' | 'zh-CN', where: string) {
  const texts = await visibleText(page);
  expect(texts.length, where).toBeGreaterThan(3);
  const bad: string[] = [];
  for (const s of texts) {
    if (RAW_KEY.test(s) || NS_KEY.test(s)) bad.push(`raw key: ${s}`);
    // a machine value shown as is: one status or result word alone, untranslated
    else if (lang === 'zh-CN' && MACHINE_WORD.test(s)) bad.push(`untranslated word: ${s}`);
    // a file's own words quoted “…” inside a sentence (msprobe's Err_message) are not ours
    else if (lang === 'zh-CN' && ENGLISH_SENTENCE.test(s.replace(QUOTED, '')))
      bad.push(`English in zh-CN: ${s}`);
    else if (lang === 'en' && CHINESE.test(s)) bad.push(`Chinese in en: ${s}`);
  }
  expect(bad, `${where} (${lang})`).toEqual([]);
}

for (const lang of ['en', 'zh-CN'] as const) {
  test(`every page and dialog speaks ${lang} only, with no raw key`, async ({ app }) => {
    test.setTimeout(120_000);
    const { page } = app;
    const shell = new Shell(page);
    await shell.ready();
    await shell.language(lang);

    const dialog = async (open: string, testId: string, where: string) => {
      await page.getByTestId(open).click();
      const d = page.getByTestId(testId);
      await expect(d).toBeVisible();
      // dialogs that load something: wait until it has (no "loading" left)
      await expect(d.locator('.muted', { hasText: /Loading…|加载中/ })).toHaveCount(0);
      await check(page, lang, where);
      await d.locator('header button').click();
      await expect(d).toBeHidden();
    };

    await shell.nav('hosts').click();
    await expect(page.getByTestId('open-add-host')).toBeVisible();
    await check(page, lang, 'hosts');
    await dialog('open-add-host', 'add-host-dialog', 'add host');
    await dialog('open-import', 'import-dialog', 'ssh config import');
    // refused fields, then a key file that is not there: a warning at save, not a refusal
    await page.getByTestId('open-add-host').click();
    const d = page.getByTestId('add-host-dialog');
    await d.getByTestId('host-name').fill('bad name!');
    await d.getByTestId('host-save').click();
    await expect(d.locator('.error').first()).toBeVisible();
    await check(page, lang, 'add host, refused fields');
    await d.getByTestId('host-name').fill('npu-x');
    await d.getByTestId('host-hostname').fill('127.0.0.1');
    await d.getByTestId('host-identityFile').fill('/nonexistent/id_ed25519');
    await d.getByTestId('host-save').click();
    await expect(d.getByTestId('host-warnings')).toContainText('/nonexistent/id_ed25519');
    // saved: nothing left to save a second time (that was a conflict with itself)
    await expect(d.getByTestId('host-save')).toHaveCount(0);
    await expect(d.getByTestId('host-name')).toHaveCount(0);
    await check(page, lang, 'add host, key file missing');
    await d.getByTestId('host-warnings-ok').click();
    await expect(page.getByTestId('host-title')).toHaveText('npu-x');
    await check(page, lang, 'host detail');

    await shell.nav('sessions').click();
    await check(page, lang, 'sessions (empty)');
    await dialog('open-new-project', 'project-dialog', 'new project');
    // a refused number, by its field
    await page.getByTestId('open-new-project').click();
    await page.getByTestId('project-name').fill('p1');
    await page.getByTestId('project-stepTimeMs').fill('abc');
    await page.getByTestId('project-save').click();
    await expect(page.getByTestId('project-stepTimeMs-error')).toBeVisible();
    await check(page, lang, 'project with a refused field');
    await page.getByTestId('project-stepTimeMs').fill('');
    await page.getByTestId('project-save').click();
    await expect(page.getByTestId('project-saved')).toBeVisible();
    await check(page, lang, 'projects');
    await dialog('project-edit-p1', 'project-dialog', 'edit project');
    await dialog('open-new-session', 'new-session-dialog', 'new session');

    await page.getByTestId('project-session-p1').click();
    await page.getByTestId('session-create').click();
    await expect(page.getByTestId('next-step')).toBeVisible();
    await check(page, lang, 'session');
    await dialog('session-hosts-open', 'session-hosts-dialog', 'session hosts');
    const rail = page.getByTestId('progress-rail').locator('button');
    const count = await rail.count();
    for (let i = 0; i < count; i++) {
      const stage = rail.nth(i);
      const id = await stage.getAttribute('data-testid');
      if ((await stage.getAttribute('data-built')) !== 'true') continue;
      await stage.click();
      await expect(stage).toHaveAttribute('aria-current', 'page');
      await check(page, lang, `session ${id}`);
    }
    // a precision run's view (first divergence, chart, module table, a module's drill-down):
    // an msprobe workbook imported into the session (the host only opens the stage; nothing runs)
    await page.getByTestId('session-hosts-open').click();
    await page.getByTestId('pick-host-npu-x').check();
    await page.getByTestId('session-hosts-save').click();
    await expect(page.getByTestId('session-hosts-dialog')).toBeHidden();
    await page.getByTestId('stage-precision').click();
    const imp = page.getByTestId('precision-import');
    await imp.locator('input').fill(join(process.cwd(), 'tests/fixtures/precision-xlsx'));
    await imp.locator('button[type="submit"]').click();
    await expect(page.getByTestId('precision-first')).toBeVisible({ timeout: 30_000 });
    await expect(page.getByTestId('precision-curve').locator('canvas')).toBeVisible();
    await check(page, lang, 'precision run view');
    await page.getByTestId('precision-modules').locator('tbody tr').first().click();
    await expect(page.getByTestId('precision-dump-none')).toBeVisible();
    await check(page, lang, 'precision module drill-down');
    // every stage is built (the rail walk above covers them): an unknown one is what is left
    await expect(
      page.getByTestId('progress-rail').locator('button[data-built="false"]'),
    ).toHaveCount(0);
    await page.evaluate("location.hash = '#/sessions/1/nosuchstage'");
    await expect(page.getByTestId('stage-unknown')).toBeVisible();
    await check(page, lang, 'a stage that does not exist');

    await shell.nav('code').click();
    await expect(page.getByTestId('scan-path')).toBeVisible();
    await check(page, lang, 'code');
    await shell.nav('reports').click();
    await expect(page.getByTestId('page-reports')).toBeVisible();
    await check(page, lang, 'reports');
    await shell.nav('settings').click();
    await expect(page.getByTestId('app-info')).toBeVisible();
    await check(page, lang, 'settings');
  });
}
