import { execFileSync } from 'node:child_process';
import {
  chownSync,
  cpSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCore, type Core } from '../../electron/core/api/core';
import { CHROMIUM_ARGS, chromiumPath } from '../../electron/core/reports/chromium';
import {
  registerSimHost,
  simHostsSupported,
  startSimHost,
  type SimHost,
} from '../../e2e/hosts/sim-host';
import { Report, type ReportFormat } from '../../shared/api';
import { reportJsonSchema } from '../../shared/api/report-schema';
import { amw } from '../support/cli';

const support = simHostsSupported();
const d = support.ok ? describe : describe.skip;
const require = createRequire(import.meta.url);

let sim: SimHost;
let core: Core;
let home: string;
let work: string;
let sessionId: number;
let previousId: number;

async function wait(started: { jobId: string }) {
  const job = await core.jobs.wait(started.jobId);
  if (job.status !== 'succeeded') throw new Error(JSON.stringify(job.error));
  return job.result;
}
async function exported(
  format: ReportFormat,
  extra: { hideNames?: boolean; language?: 'en' | 'zh-CN' } = {},
) {
  return core.call('reports.export', { source: { sessionId }, format, language: 'en', ...extra });
}

d('reports from real sessions on a simulated host', () => {
  beforeAll(async () => {
    sim = await startSimHost('report-host', 'torch-npu-mismatch');
    const models = join(sim.dir, 'home', 'models');
    cpSync(join(__dirname, '../fixtures/ops-models'), models, { recursive: true });
    const { uid, gid } = statSync(join(sim.dir, 'home'));
    chownSync(models, uid, gid);
    home = mkdtempSync(join(tmpdir(), 'amw-report-'));
    work = mkdtempSync(join(tmpdir(), 'amw-report-code-'));
    cpSync(join(__dirname, '../fixtures/code/nanogpt-ddp'), join(work, 'nanogpt'), {
      recursive: true,
    });
    core = createCore({
      env: { AMW_HOME: home } as NodeJS.ProcessEnv,
      hostKeyPolicy: 'accept-new',
      userKnownHosts: [],
    });
    await registerSimHost(core, sim, { name: 'npu-lab' });
    await core.call('projects.create', {
      name: 'nanogpt',
      codeLocation: join(work, 'nanogpt'),
      targetHosts: ['npu-lab'],
    });
    // an earlier session of the same project, then today's with every built stage
    previousId = (await core.call('sessions.create', { project: 'nanogpt', title: 'first try' }))
      .id;
    await wait(
      await core.call('stages.run', { host: 'npu-lab', stage: 'env', sessionId: previousId }),
    );
    sessionId = (await core.call('sessions.create', { project: 'nanogpt', title: 'port nanoGPT' }))
      .id;
    await wait(await core.call('stages.run', { host: 'npu-lab', stage: 'env', sessionId }));
    const { scanId } = (await wait(
      await core.call('code.scan', { path: join(work, 'nanogpt'), sessionId }),
    )) as { scanId: number };
    await core.call('code.review', { scanId, file: 'train.py', review: 'accepted' });
    // a file the scan told about but proposed nothing for, edited by hand
    const req = await core.call('code.file', { scanId, file: 'requirements.txt' });
    await core.call('code.review', {
      scanId,
      file: 'requirements.txt',
      review: 'edited',
      text: `${req.original}torch_npu==2.1.0.post10\n`,
    });
    await wait(
      await core.call('stages.run', {
        host: 'npu-lab',
        stage: 'ops',
        sessionId,
        entry: 'models/models.py:quantized',
      }),
    );
    await core.call('checks.waive', {
      sessionId,
      host: 'npu-lab',
      checkId: 'env.limits',
      reason: 'memlock is raised by the job scheduler',
      by: 'Zhang San',
    });
    await core.call('reports.comment', {
      source: { sessionId },
      target: 'check:env.version-matrix@npu-lab',
      author: 'Li Si',
      text: 'Rebuild torch_npu for CANN 8.5 before the next run.',
    });
    await core.call('reports.decide', {
      source: { sessionId },
      decision: 'changes-requested',
      by: 'Li Si',
      note: 'version matrix first',
    });
  }, 240_000);

  afterAll(async () => {
    await core?.close();
    await sim?.stop();
    rmSync(home, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });

  it('the report model: readiness, what blocks, waivers, inventories, code with accepted diffs, ops, changes, review', async () => {
    const r = await core.call('reports.build', { source: { sessionId }, language: 'en' });
    expect(r.schema).toBe('amw.report/v1');
    expect(r.summary.readiness).toBe('blocked');
    expect(r.summary.blocking.map((b) => b.check)).toContain('env.version-matrix');
    expect(r.summary.waivers).toEqual([
      expect.objectContaining({ check: 'env.limits', by: 'Zhang San' }),
    ]);
    expect(r.inventories[0]).toMatchObject({ host: 'npu-lab', torchNpu: '2.5.1' });
    expect(r.stages.map((s) => s.stage).sort()).toEqual(['code', 'env', 'ops']);
    expect(r.code!.diffs.find((x) => x.file === 'train.py')!.patch).toContain('+import torch_npu');
    expect(r.code!.diffs.find((x) => x.file === 'requirements.txt')!.patch).toContain(
      '+torch_npu==2.1.0.post10',
    );
    expect(r.ops[0]!.breakdown.cpuFallback).toBeGreaterThan(0);
    expect(r.changes!.previousSessionId).toBe(previousId);
    // the earlier session ran the environment only: today's code and ops checks are new, and
    // nothing it ran was left out
    expect(r.changes!.added!.map((c) => c.check)).toEqual(
      expect.arrayContaining(['dist.nccl', 'ops.cpu-fallback']),
    );
    expect(r.changes!.added!.find((c) => c.check === 'dist.nccl')).toMatchObject({ to: 'fail' });
    // the environment ran both times: not new
    expect(r.changes!.added!.some((c) => c.check.startsWith('env.'))).toBe(false);
    expect(r.changes!.notRun).toEqual([]);
    expect(r.review.decisions[0]).toMatchObject({ decision: 'changes-requested', by: 'Li Si' });
    expect(r.review.comments[0]!.text).toContain('CANN 8.5');
  });

  it('HTML is one file that loads nothing from a network, and reads in both languages', async () => {
    const { text: html } = await exported('html');
    expect(html).not.toMatch(/\b(src|href)\s*=\s*["']?(https?:)?\/\//i);
    expect(html).not.toMatch(/<script|<link|@import|url\(/i);
    // times read as times (in UTC, for a team in several zones), not as stored
    expect(html).toMatch(
      /Generated \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC by Ascend Migration Workbench/,
    );
    expect(html).not.toMatch(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/);
    const browser = await (
      await import('playwright-core')
    ).chromium.launch({ executablePath: chromiumPath(), args: CHROMIUM_ARGS });
    try {
      const page = await browser.newPage();
      const requests: string[] = [];
      page.on('request', (req) => requests.push(req.url()));
      await page.setContent(html!, { waitUntil: 'load' });
      expect(requests).toEqual([]);
      await expect(page.locator('[data-readiness]').getAttribute('data-readiness')).resolves.toBe(
        'blocked',
      );
      expect(await page.locator('tr[data-check="env.version-matrix"]').count()).toBe(1);
    } finally {
      await browser.close();
    }
    // the hosts table's headings are words in the report's language, not field names
    expect(html).toContain('<th>Chips</th>');
    expect(html).not.toContain('<th>chipCount</th>');
    // rule texts' code spans are code, not backticks shown as they are
    expect(html).toContain('<code>import torch_npu</code>');
    expect(html).not.toContain('`import torch_npu`');
    // review comments and waivers name the check and host as a reader knows them, not stored ids
    const built = await core.call('reports.build', { source: { sessionId }, language: 'en' });
    const titleOf = (id: string) =>
      built.stages.flatMap((s) => s.checks).find((c) => c.id === id)!.title;
    // the summary bar counts a waived failure as waived, not as a failure
    const checks = built.stages.flatMap((s) => s.checks);
    const waived = checks.filter((c) => c.waiver).length;
    const failing = checks.filter((c) => !c.waiver && ['fail', 'error'].includes(c.status)).length;
    expect(waived).toBeGreaterThan(0);
    expect(html).toContain(`<i class="sw c-waived"></i>waived <b>${waived}</b>`);
    expect(html).toContain(`<i class="sw c-fail"></i>fail <b>${failing}</b>`);
    // a waived row says so, not a red "fail"; the Markdown has the same counts in a line
    expect(html!.split('class="pill s-waived">').length - 1).toBe(waived);
    expect(html).toMatch(/class="pill s-waived">(fail|warn|error) · waived</);
    const md = (await exported('md')).text!;
    expect(md).toContain(`· ❌ ${failing} fail · 🟣 ${waived} waived ·`);
    expect(md).toMatch(/\| `env\.limits` [^\n]*\| 🟣 warn · waived \|/);
    // (Markdown escapes the titles' underscores)
    for (const doc of [html!, md.replace(/\\(.)/g, '$1')]) {
      expect(doc).not.toContain('check:env.version-matrix@');
      expect(doc).toContain(`${titleOf('env.version-matrix')} — npu-lab`);
      expect(doc).toContain(`${titleOf('env.limits')} — npu-lab: waived by Zhang San`);
      // checks the earlier session did not run are a change, not "No check changed", named
      // and gathered by stage
      expect(doc).not.toContain('No check changed');
    }
    // evidence reads as fields and lists, not as a JSON dump
    expect(html).toContain('<dl class="ev"><dt>count</dt><dd><span class="ev-text">1</span></dd>');
    expect(html).not.toMatch(/"count": \d/);
    // the review reads under its own headings: the comments, then the decisions
    expect(md).toMatch(/### Comments\n\n- [^\n]+\n\n### Decisions\n\n- changes requested/);
    // what blocks keeps its code spans as code (`import torch_npu`), not escaped backticks
    const blocking = md.split('\n').filter((l) => l.startsWith('- **'));
    expect(blocking.join('\n')).toContain('`import torch_npu`');
    expect(blocking.join('\n')).not.toContain('\\`');
    const newChecks = md
      .replace(/\\(.)/g, '$1')
      .split('\n')
      .filter((l) => l.startsWith('- New checks: '));
    expect(newChecks).toHaveLength(2); // code on this machine, ops on npu-lab
    expect(newChecks.find((l) => l.includes(' — this machine: '))).toContain(
      `${titleOf('dist.nccl')}, `,
    );
    expect(newChecks.join('\n')).not.toContain('dist.nccl');
    const zh = await exported('html', { language: 'zh-CN' });
    // a label's colon is the language's own
    expect(zh.text).toMatch(/迁移报告：port nanoGPT/);
    // the code section's fix mode in words too
    expect(zh.text).toMatch(/（[^（）]*nanogpt，改写）：/);
    // and the decision's note after the language's colon
    // (in the language's own brackets)
    expect(zh.text).toMatch(/UTC）：version matrix first/);
    expect(zh.text).toMatch(/新增检查<\/b>：[^<]+ — 本机：[^<]+、/);
    expect(zh.text).toContain('<th>芯片数</th>');
    expect(zh.text).toContain('迁移报告');
    // the product by its name in the report's language, no space between Chinese words
    expect(zh.text).toMatch(
      /由昇腾迁移工作台 \d+\.\d+\.\d+ 于 \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC 生成/,
    );
    expect(zh.text).toContain('受阻');
    expect(zh.text).toContain('新增检查');
  });

  it('the PDF (Chromium printing) has the summary and the check ids in its text', async () => {
    const pdf = await exported('pdf');
    const file = join(work, 'report.pdf');
    writeFileSync(file, Buffer.from(pdf.base64!, 'base64'));
    expect(readFileSync(file).subarray(0, 5).toString()).toBe('%PDF-');
    const text = execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' });
    expect(text).toContain('Migration report: port nanoGPT');
    expect(text).toContain('Blocked: failures remain');
    for (const id of [
      'env.version-matrix',
      'env.torch-npu-import',
      'dist.nccl',
      'ops.cpu-fallback',
    ])
      expect(text).toContain(id);
  }, 60_000);

  it('JSON validates against the published schema and re-imports identically', async () => {
    const json = (await exported('json')).text!;
    const doc = JSON.parse(json) as unknown;
    const Ajv2020 = require('ajv2020/dist/2020').default;
    const schema = JSON.parse(
      readFileSync(join(__dirname, '../../docs/report.schema.json'), 'utf8'),
    );
    expect(schema).toEqual(reportJsonSchema()); // the committed schema is the definition's
    const validate = new Ajv2020({ strict: false }).compile(schema);
    expect(validate(doc), JSON.stringify(validate.errors)).toBe(true);
    expect(Report.safeParse(doc).success).toBe(true);
    const imported = await core.call('reports.import', { json });
    expect(imported).toMatchObject({ title: 'port nanoGPT', sessionId });
    const back = await core.call('reports.build', { source: { importId: imported.id } });
    expect(back).toEqual(doc);
    // a teammate reviews the imported copy; the next export carries it
    await core.call('reports.comment', {
      source: { importId: imported.id },
      target: 'session',
      author: 'Wang Wu',
      text: 'Looks right to me.',
    });
    const again = JSON.parse(
      (await core.call('reports.export', { source: { importId: imported.id }, format: 'json' }))
        .text!,
    ) as Report;
    expect(again.review.comments.map((c) => c.author)).toEqual(['Li Si', 'Wang Wu']);
    // not a report: a clear refusal
    await expect(core.call('reports.import', { json: '{"schema":"other"}' })).rejects.toMatchObject(
      {
        code: 'VALIDATION',
      },
    );
  });

  it('SARIF validates against the SARIF 2.1.0 schema; JUnit against its XSD, one case per check', async () => {
    const sarif = JSON.parse((await exported('sarif')).text!) as { runs: { results: unknown[] }[] };
    const Ajv = require('ajv');
    const ajv = new Ajv({ schemaId: 'id', allErrors: true, unknownFormats: 'ignore' });
    ajv.addMetaSchema(require('ajv/lib/refs/json-schema-draft-04.json'));
    const validate = ajv.compile(
      require('@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json'),
    );
    expect(validate(sarif), JSON.stringify(validate.errors?.slice(0, 3))).toBe(true);
    expect(sarif.runs[0]!.results.length).toBeGreaterThan(5);

    const xml = (await exported('junit')).text!;
    const file = join(work, 'report.xml');
    writeFileSync(file, xml);
    execFileSync(
      'xmllint',
      ['--noout', '--schema', join(__dirname, '../support/schemas/junit.xsd'), file],
      {
        stdio: 'pipe',
      },
    );
    const r = await core.call('reports.build', { source: { sessionId } });
    const checks = r.stages.reduce((n, s) => n + s.checks.length, 0);
    expect(xml.match(/<testcase /g)!.length).toBe(checks);
    expect(xml).toContain('classname="amw.env.npu-lab"');
  });

  it('nothing secret in any export; host and user names can be hidden', async () => {
    const host = await core.call('hosts.get', { name: 'npu-lab' });
    for (const format of ['json', 'md', 'html', 'junit'] as const) {
      const plain = (await exported(format)).text!;
      expect(plain, format).not.toContain(host.identityFile!);
      const hidden = (await exported(format, { hideNames: true })).text!;
      for (const name of ['npu-lab', host.username!])
        expect(hidden, `${format} hides ${name}`).not.toContain(name);
      expect(hidden).toContain('host-1');
    }
  });

  it('amw report writes each format; a bad session is exit 2', async () => {
    const out = join(work, 'cli.md');
    const r = await amw(['report', String(sessionId), '--format', 'md', '--out', out], {
      AMW_HOME: home,
    });
    expect(r.code).toBe(0);
    const md = readFileSync(out, 'utf8');
    expect(md).toContain('# Migration report: port nanoGPT');
    expect(md).toContain('```diff');
    // tidy for a reader: a stage not run has no mark and no stray space; no run of blank lines
    // where sections had nothing to say (the diff's own lines are kept as they are)
    expect(md).toMatch(/^\| Precision \| not run \| — \|$/m);
    expect(md.split('```')[0]).not.toMatch(/\n\n\n/);
    expect((await amw(['report', 'x'], { AMW_HOME: home })).code).toBe(2);
    expect((await amw(['report', '999'], { AMW_HOME: home })).code).toBe(2);
  });
});
