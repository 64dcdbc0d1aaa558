import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { test, expect } from './support/fixtures';
import { Shell } from './pages/shell';
import { docShot } from './support/doc-shot';
import { simHostsSupported, startSimHost, type SimHost } from './hosts/sim-host';
import { translator } from '../shared/i18n';
import { STAGE_NAMESPACES } from '../shared/stages';

const NANOGPT = join(process.cwd(), 'tests/fixtures/code/nanogpt-ddp');
const support = simHostsSupported();
/** Screenshots of every page the journey passes, per language, for docs/ (AMW_SCREENSHOTS=1). */
const shot = (page: Page, lang: string, name: string) => docShot(page, `${lang}-${name}`);

for (const lang of ['en', 'zh-CN'] as const) {
  test.describe(`a new user's journey (${lang})`, () => {
    test.skip(!support.ok, support.ok ? '' : support.reason);
    let sim: SimHost;
    let project: string;
    test.beforeAll(async () => {
      sim = await startSimHost(`e2e-journey-${lang === 'en' ? 'en' : 'zh'}`, 'ascend-910b');
    });
    test.afterAll(async () => {
      await sim.stop();
    });
    test.beforeEach(() => {
      project = join(mkdtempSync(join(tmpdir(), 'amw-e2e-journey-')), 'nanogpt');
      cpSync(NANOGPT, project, { recursive: true });
    });
    test.afterEach(() => rmSync(join(project, '..'), { recursive: true, force: true }));

    test('project → scan → review per change → patch → add a host → env → next step → report', async ({
      app,
    }) => {
      test.setTimeout(180_000);
      const t = translator(lang, STAGE_NAMESPACES);
      const { page } = app;
      const shell = new Shell(page);
      await shell.ready();
      await shell.language(lang);

      // 1. a project: a step time that is not a number is refused by its field, then created
      await shell.nav('sessions').click();
      await shot(page, lang, 'sessions-empty');
      await page.getByTestId('open-new-project').click();
      const pd = page.getByTestId('project-dialog');
      await pd.getByTestId('project-name').fill('nanogpt');
      await pd.getByTestId('project-codeLocation').fill(project);
      await pd.getByTestId('project-gpuModel').fill('A100 80GB');
      await pd.getByTestId('project-stepTimeMs').fill('abc');
      await pd.getByTestId('project-save').click();
      await expect(pd.getByTestId('project-stepTimeMs-error')).toHaveText(
        t('validation.issue', {
          field: t('validation.field.stepTimeMs'),
          problem: t('validation.rule.number'),
        }),
      );
      await shot(page, lang, 'project-dialog');
      await pd.getByTestId('project-stepTimeMs').fill('850');
      await pd.getByTestId('project-save').click();
      await expect(page.getByTestId('project-saved')).toContainText(
        t('sessions.project.created', { name: 'nanogpt' }),
      );
      const row = page.getByTestId('project-row-nanogpt');
      await expect(row).toContainText(project);
      await expect(row).toContainText('A100 80GB');
      await expect(row).toContainText(t('sessions.project.noSessions'));
      await shot(page, lang, 'projects');

      // 2. a session of it, without hosts: the guide says what comes first and why
      await page.getByTestId('project-saved-session').click();
      await expect(page.getByTestId('session-project')).toHaveValue('nanogpt');
      await page.getByTestId('session-title').fill('first port');
      await page.getByTestId('session-create').click();
      await expect(page.getByTestId('session-title')).toHaveText('first port');
      const next = page.getByTestId('next-step');
      await expect(next).toHaveAttribute('data-next', 'env');
      await expect(next.getByTestId('next-what')).toHaveText(t('sessions.next.addHost'));
      await expect(page.getByTestId('stage-needs-hosts')).toBeVisible();
      // the guide offers to add one: the stage's notice does not offer it a second time
      await expect(next.getByTestId('next-add-host')).toBeVisible();
      await expect(page.getByTestId('stage-add-host')).toHaveCount(0);
      await shot(page, lang, 'session-no-hosts');

      // 3. scan it from the session's code stage, then review change by change
      await page.getByTestId('stage-code').click();
      await page.getByTestId('code-stage-scan').click();
      const scanRow = page.getByTestId('code-stage-scan-row');
      await expect(scanRow).toHaveCount(1, { timeout: 60_000 });
      // which folder the scan was of
      await expect(scanRow.getByTestId('code-stage-folder')).toHaveText('nanogpt');
      await expect(page.getByTestId('code-stage-reviewed')).toHaveText(
        t('code.reviewedCount', { accepted: 0, changed: 1 }),
      );
      await shot(page, lang, 'session-code');
      await scanRow.getByRole('link').click();
      await expect(page.getByTestId('scan-review')).toBeVisible();
      // nothing accepted: the export says so instead of downloading an empty file
      await page.getByTestId('export-patch').click();
      await expect(page.getByTestId('export-nothing')).toHaveText(t('code.exportNothing'));
      const train = page.locator('[data-testid=tree-file][data-file="train.py"]');
      await train.click();
      const editor = page.getByTestId('diff-editor');
      await expect(editor).toHaveAttribute('data-ready', 'true', { timeout: 30_000 });
      await expect(page.getByTestId('apply-open')).toHaveText(t('code.apply', { count: 0 }));
      await page.getByTestId('hunk-accept').click();
      // one change of several accepted: it counts, and the tree shows the file as partly taken
      await expect(train.getByTestId('review-state')).toHaveAttribute('data-state', 'partial');
      await expect(train.getByTestId('review-state')).toHaveText(/^1\/\d+$/);
      const total = Number((await train.getByTestId('review-state').textContent())!.split('/')[1]);
      await expect(page.getByTestId('apply-open')).toHaveText(t('code.apply', { count: 1 }));
      await shot(page, lang, 'code-review');
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByTestId('export-patch').click(),
      ]);
      const patch = readFileSync((await download.path())!, 'utf8');
      expect(patch).toContain('+import torch_npu');
      expect(patch).not.toContain('+    init_process_group(backend="hccl")');
      await expect(page.getByTestId('export-done')).toHaveText(t('code.exported', { count: 1 }));

      // 4. a host, added to the existing session
      await shell.nav('hosts').click();
      await page.getByTestId('open-add-host').click();
      const d = page.getByTestId('add-host-dialog');
      await expect(d).toContainText(t('hosts.add.tags'));
      await d.getByTestId('host-name').fill('npu-a');
      await d.getByTestId('host-hostname').fill(sim.host);
      await d.getByTestId('host-port').fill(String(sim.port));
      await d.getByTestId('host-username').fill(sim.user);
      await d.getByTestId('host-identityFile').fill(sim.clientKey);
      await d.getByTestId('host-save').click();
      await expect(page.getByTestId('host-title')).toHaveText('npu-a');
      await shell.nav('sessions').click();
      await expect(page.getByTestId('project-row-nanogpt')).toContainText(
        t('sessions.project.sessionCount', { count: 1 }),
      );
      await page.getByTestId('session-row-1').click();
      // the timeline has the scan and the review decision on train.py
      await expect(page.getByTestId('timeline-code-review')).toContainText('train.py');
      // taken part way: the timeline says how much, as the tree does
      await expect(page.getByTestId('timeline-code-review')).toContainText(
        t('code.review.partial', { accepted: 1, total }),
      );
      // and the session's scans table says the file was taken in part, not simply "accepted"
      await page.getByTestId('stage-code').click();
      await expect(page.getByTestId('code-stage-reviewed')).toHaveText(
        t('code.reviewedCount', { accepted: 1, changed: 1 }) +
          t('code.reviewedInPart', { count: 1 }),
      );
      await page.getByTestId('stage-env').click();
      // the scan ran here, before the session had a host: credited to this machine, in words
      await expect(
        page
          .getByTestId('timeline-run')
          .filter({ hasText: t('common.thisMachine') })
          .first(),
      ).toBeVisible();
      await expect(page.getByTestId('session-view')).not.toContainText('(local)');
      // the code stage has a (failing) result now; the environment still needs its host
      await expect(page.getByTestId('stage-code')).not.toHaveAttribute('data-status', 'none');
      await page.getByTestId('next-add-host').click();
      const hd = page.getByTestId('session-hosts-dialog');
      // this machine is offered too, though nobody has opened its page yet
      await expect(hd.getByTestId('pick-host-local')).toBeVisible();
      await hd.getByTestId('pick-host-npu-a').check();
      await hd.getByTestId('session-hosts-save').click();
      await expect(page.getByTestId('session-hosts')).toContainText('npu-a');

      // 5. run env there; the next step follows from its result
      await expect(next.getByTestId('next-what')).toHaveText(
        t('sessions.next.run', { stage: t('stage-env:name') }),
      );
      // the environment is the stage on screen already: the guide offers no button to open it
      await expect(page.getByTestId('session-view')).toHaveAttribute('data-stage', 'env');
      await expect(next.getByTestId('next-go')).toHaveCount(0);
      const column = page.getByTestId('host-column-npu-a');
      await column.getByTestId('run-stage').click();
      await page.getByTestId('hostkey-accept').click();
      // the simulated host fails some checks: the guide says to fix or waive them, and why
      await expect(page.getByTestId('stage-env')).toHaveAttribute('data-status', 'fail', {
        timeout: 60_000,
      });
      await expect(page.getByTestId('stage-env').getByTestId('rail-evidence')).toBeVisible();
      await expect(page.getByTestId('timeline-run').first()).toBeVisible();
      const failing = column.locator('[data-testid^="check-"][data-status="fail"]');
      const n = await failing.count();
      expect(n).toBeGreaterThan(0);
      await expect(next).toHaveAttribute('data-next', 'env');
      await expect(next.getByTestId('next-why')).toHaveText(
        t('sessions.next.fixWhy', { stage: t('stage-env:name'), count: n }),
      );
      // the stage to fix is the one on screen: no button to open it again
      await expect(next.getByTestId('next-go')).toHaveCount(0);
      await shot(page, lang, 'session-env');
      for (let i = 0; i < n; i++) {
        const check = failing.nth(i);
        await check.getByTestId('waive').click();
        const wd = page.getByTestId('waive-dialog');
        await wd
          .getByTestId('waive-reason')
          .fill('known on the simulated rack, fixed with CANN 8.5');
        await wd.getByTestId('waive-by').fill('Wang Fang');
        await wd.getByTestId('waive-save').click();
        await expect(check.getByTestId('waiver')).toBeVisible();
      }
      await expect(page.getByTestId('stage-env').getByTestId('rail-waived')).toHaveText(
        t('sessions.rail.waived', { count: n }),
      );
      await expect(page.getByTestId('timeline-waiver')).toHaveCount(n);
      // env is waived through; the code scan failed with unwaived findings: that comes next
      await expect(next).toHaveAttribute('data-next', 'code');
      await expect(next.getByTestId('next-what')).toHaveText(
        t('sessions.next.fix', { stage: t('stage-code:name') }),
      );
      await next.getByTestId('next-go').click();
      await expect(page.getByTestId('session-view')).toHaveAttribute('data-stage', 'code');
      // and a later stage warns about it
      await page.getByTestId('stage-ops').click();
      await expect(page.getByTestId('stage-gate')).toContainText(t('stage-code:name'));
      await shot(page, lang, 'session-gate');

      // 6. the report, exported
      await shell.nav('reports').click();
      await page.getByTestId('report-source').selectOption('s1');
      await page.getByTestId('report-format').selectOption('md');
      const [report] = await Promise.all([
        page.waitForEvent('download'),
        page.getByTestId('report-export').click(),
      ]);
      const md = readFileSync((await report.path())!, 'utf8');
      expect(md).toContain('npu-a');
      expect(md).toContain('+import torch_npu');
      await shot(page, lang, 'reports');
    });
  });
}
