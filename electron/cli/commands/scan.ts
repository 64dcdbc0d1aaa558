import { cpSync, existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import type { Command } from 'commander';
import { AmwError } from '../../../shared/errors';
import { msg } from '../../../shared/api/text';
import type { CodeAnalysis } from '../../../shared/api';
import { codeApi } from '../../../shared/stages/code/api';
import { unifiedPatch, type FixMode } from '../../core/analyzer/fix';
import { loadRules } from '../../core/analyzer/rules';
import { toSarif } from '../../core/analyzer/sarif';
import type { Core } from '../../core/api/core';
import { createLocalCore } from '../../core/api/local-core';
import { analyzeHandler } from '../../core/stages/code/analyze-handler';
import { textIn } from '../../core/i18n';
import { EXIT, ExitWith, printJson, type CommandEnv } from '../io';
import type { Configure } from '../program';
import { awaitJob, withCore } from './with-core';

const SKIP_COPY = new Set(['.git', 'node_modules', '__pycache__', '.venv', 'venv']);

export function registerScanCommand(program: Command, env: CommandEnv, configure: Configure): void {
  const { t, io, global } = env;
  configure(program.command('scan'))
    .description(t('cli.cmd.scan'))
    .argument('<path>')
    .option('--json', t('cli.opt.json'))
    .option('--sarif <file>', t('cli.opt.sarif'))
    .option('--fix', t('cli.opt.fix'))
    .option('--out <dir>', t('cli.opt.out'))
    .option('--patch <file>', t('cli.opt.patch'))
    .option('--mode <mode>', t('cli.opt.mode'), 'rewrite')
    .option('--exclude <glob...>', t('cli.opt.exclude'))
    .option('--session <id>', t('cli.opt.scanSession'))
    .action(
      async (
        path: string,
        o: {
          json?: boolean;
          sarif?: string;
          fix?: boolean;
          out?: string;
          patch?: string;
          mode: string;
          exclude?: string[];
          session?: string;
        },
      ) => {
        if (o.mode !== 'rewrite' && o.mode !== 'transfer')
          throw new AmwError('VALIDATION', msg('errors.text.scanMode', { value: String(o.mode) }));
        if (o.fix && !o.out) throw new AmwError('VALIDATION', msg('errors.text.fixNeedsOut'));
        const root = resolve(path);
        const sessionId = o.session === undefined ? undefined : Number(o.session);
        if (sessionId !== undefined && !(Number.isInteger(sessionId) && sessionId > 0))
          throw new AmwError(
            'VALIDATION',
            msg('errors.text.sessionIdNumber', { value: String(o.session) }),
          );
        const input = { path: root, mode: o.mode as FixMode, exclude: o.exclude };
        const migrate = !!(o.fix || o.patch);
        // both ways go through the engine's dispatch: without a session on a core that opens
        // no database (nothing is stored); with one, the session's code stage stores the scan
        // and what is printed is read back from it — the folder is scanned once either way
        const scan =
          sessionId === undefined
            ? await createLocalCore(codeApi, {
                'code.analyze': analyzeHandler(() => global.lang, { oneThread: true }),
              }).call('code.analyze', {
                ...input,
                migrate,
                lang: global.lang,
              })
            : await withCore(env, (core) =>
                storedScan(env, core, { ...input, sessionId }, migrate),
              );
        const rules = loadRules();
        if (o.sarif)
          writeFileSync(
            o.sarif,
            `${JSON.stringify(toSarif(scan.findings, rules, global.lang), null, 2)}\n`,
          );
        const changed = new Map<string, { before: string; after: string; parses: boolean }>();
        for (const c of scan.changed ?? []) {
          if (c.parses) changed.set(c.file, c);
          else io.stderr(`${t('cli.scanNotParsing', { file: c.file })}\n`);
        }
        if (o.patch) writeFileSync(o.patch, unifiedPatch(changed));
        if (o.fix && o.out) {
          const out = resolve(o.out);
          const rel = relative(root, out);
          if (!rel.startsWith('..') && rel !== '' && !rel.startsWith(`..${sep}`))
            throw new AmwError('VALIDATION', msg('errors.text.outInside'));
          if (existsSync(out) && readdirSync(out).length)
            throw new AmwError('CONFLICT', msg('errors.text.outNotEmpty', { path: out }));
          // one file scanned: its copy alone (the scan names it as in its folder)
          if (statSync(root).isFile()) {
            mkdirSync(out, { recursive: true });
            cpSync(root, join(out, basename(root)));
          } else
            cpSync(root, out, {
              recursive: true,
              filter: (src) => !SKIP_COPY.has(src.split(sep).pop() ?? ''),
            });
          for (const [file, c] of changed) {
            mkdirSync(dirname(join(out, file)), { recursive: true });
            writeFileSync(join(out, file), c.after);
          }
        }
        const summary = {
          root: scan.root,
          files: scan.files,
          lines: scan.lines,
          findings: scan.findings,
          effort: scan.effort,
          skipped: scan.skipped,
        };
        if (o.json) printJson(io, summary);
        else {
          let current = '';
          for (const f of scan.findings) {
            if (f.file !== current) io.stdout(`\n${(current = f.file)}\n`);
            io.stdout(
              `  ${String(f.line).padStart(5)}:${String(f.column).padEnd(4)} ${t(`code.severity.${f.severity}`).padEnd(7)} ${f.ruleId.padEnd(24)} ${f.message}\n`,
            );
          }
          const e = scan.effort;
          io.stdout(
            `\n${t('cli.scanSummary', { files: t('code.n.pyFiles', { count: scan.files }), lines: t('code.n.lines', { count: scan.lines }), findings: t('code.n.findings', { count: scan.findings.length }), level: t(`code.level.${e.level}`), device: e.dimensions.device, thirdParty: e.dimensions.thirdParty, amp: e.dimensions.mixedPrecision, multiCard: e.dimensions.multiCard })}\n`,
          );
          if (o.fix || o.patch) io.stdout(`${t('cli.scanChanged', { count: changed.size })}\n`);
        }
        for (const w of scan.warnings)
          io.stderr(`${t('cli.warning', { text: textIn(global.lang)(w) })}\n`);
        for (const x of scan.skipped) io.stderr(`${t('cli.scanSkipped', { file: x.file })}\n`);
        if (scan.findings.some((f) => f.severity === 'error')) throw new ExitWith(EXIT.failed);
      },
    );
}

/**
 * `amw scan --session`: the session's code stage scans and stores (one scan), and the CLI prints
 * the stored scan — its findings in the CLI's language (they are stored as keys too), its
 * proposed files when asked to migrate.
 */
async function storedScan(
  env: CommandEnv,
  core: Core,
  input: { path: string; mode: FixMode; exclude?: string[]; sessionId: number },
  migrate: boolean,
): Promise<CodeAnalysis> {
  const started = await core.call('code.scan', input);
  const r = (await awaitJob(env, core, started.jobId)) as {
    scanId: number;
    skipped: CodeAnalysis['skipped'];
  };
  env.io.stderr(`${env.t('cli.scanStored', { scanId: r.scanId, sessionId: input.sessionId })}\n`);
  const stored = await core.call('code.get', { scanId: r.scanId });
  const say = textIn(env.global.lang);
  const findings = stored.findings
    .map((f) => ({
      ...f,
      message: f.text ? say(f.text.message) : f.message,
      ...(f.fix
        ? { fix: { ...f.fix, description: f.text?.fix ? say(f.text.fix) : f.fix.description } }
        : {}),
    }))
    .sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line || a.column - b.column);
  const changed: NonNullable<CodeAnalysis['changed']> = [];
  if (migrate)
    for (const f of stored.fileList) {
      if (!f.parses) changed.push({ file: f.file, before: '', after: '', parses: false });
      else if (f.changed) {
        const c = await core.call('code.file', { scanId: r.scanId, file: f.file });
        changed.push({ file: f.file, before: c.original, after: c.proposed, parses: true });
      }
    }
  return {
    root: stored.root,
    files: stored.files,
    lines: stored.lines,
    findings,
    effort: stored.effort,
    warnings: stored.warnings,
    skipped: r.skipped,
    ...(migrate ? { changed } : {}),
  };
}
