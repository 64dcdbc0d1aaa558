import type { CheckOutcome, FixMode, Language } from '../../../../shared/api';
import { msg } from '../../../../shared/api/text';
import { migratedFiles } from '../../analyzer/fix';
import { pythonParser } from '../../analyzer/python-parser';
import { loadRules } from '../../analyzer/rules';
import { ruleKey } from '../../../../shared/i18n/rule-key';
import { scanProject, type ScanResult } from '../../analyzer/scan';
import type { CodeReviewStore } from '../../code-review/store';
import type { JobContext } from '../../jobs/runner';

/** One check per rule that fired: errors fail the stage, warnings warn, advice passes. */
export function codeOutcomes(scan: Pick<ScanResult, 'findings'>): CheckOutcome[] {
  const rules = new Map(loadRules().map((r) => [r.id, r]));
  const byRule = new Map<string, ScanResult['findings']>();
  for (const f of scan.findings) {
    const list = byRule.get(f.ruleId);
    if (list) list.push(f);
    else byRule.set(f.ruleId, [f]);
  }
  return [...byRule].map(([id, list]) => {
    const r = rules.get(id)!;
    const files = new Set(list.map((f) => f.file)).size;
    const first = list.reduce((a, b) =>
      a.file < b.file || (a.file === b.file && a.line <= b.line) ? a : b,
    );
    return {
      id,
      title: msg(ruleKey(id, 'title')),
      status: r.severity === 'error' ? 'fail' : r.severity === 'warning' ? 'warn' : 'pass',
      summary: msg(r.severity === 'info' ? 'stage-code:adviceAt' : 'stage-code:findingsAt', {
        count: list.length,
        files: msg('stage-code:files', { count: files }),
        at: `${first.file}:${first.line}`,
        // the finding's own words, in the language shown (its keys), else as the scan wrote it
        what: first.text?.message ?? first.message,
      }),
      evidence: {
        count: list.length,
        at: list.slice(0, 50).map((f) => `${f.file}:${f.line}:${f.column}`),
      },
      // the named finding's own fix where the rule's text names what it found (`ctx.device =
      // {{input}}.device.type`): the rule's text alone would show the placeholder
      remediation: first.text?.fix ?? msg(ruleKey(id, r.fix ? 'fix' : 'why')),
    };
  });
}

/**
 * Scans the folder, builds the proposal in the chosen mode and stores scan, findings and texts in
 * one transaction (tied to a stage run when inside a session). A cancel stores nothing.
 */
export async function scanAndStore(
  store: CodeReviewStore,
  input: { path: string; mode: FixMode; exclude?: string[]; sessionId: number | null },
  runId: number | null,
  lang: Language,
  ctx: JobContext,
): Promise<{
  scanId: number;
  findings: number;
  changedFiles: number;
  /** The files left out (not text) with why, for whoever started it (stored as names). */
  skipped: ScanResult['skipped'];
  scan: ScanResult;
}> {
  const scan = await scanProject(input.path, {
    exclude: input.exclude,
    lang,
    signal: ctx.signal,
    onProgress: (done, total) =>
      ctx.progress(total ? (0.9 * done) / total : null, {
        key: 'scanning',
        params: { done, total },
      }),
  });
  ctx.throwIfCancelled();
  const migrated = migratedFiles(scan, input.mode, await pythonParser());
  const texts = new Map<string, { original: string; proposed: string; parses: boolean }>();
  for (const [file, src] of scan.sources) {
    const m = migrated.get(file);
    // a proposal that would not parse is never offered; the findings still are
    texts.set(file, {
      original: src.text,
      proposed: m && m.parses ? m.after : src.text,
      parses: m ? m.parses : true,
    });
  }
  ctx.throwIfCancelled();
  const scanId = store.save({
    sessionId: input.sessionId,
    stageRunId: runId,
    root: scan.root,
    mode: input.mode,
    files: scan.files,
    lines: scan.lines,
    effort: scan.effort,
    warnings: scan.warnings,
    skipped: scan.skipped.map((x) => x.file),
    findings: scan.findings,
    texts,
  });
  ctx.progress(1, { key: 'scanStored' });
  return {
    scanId,
    findings: scan.findings.length,
    changedFiles: [...texts.values()].filter((t) => t.original !== t.proposed).length,
    skipped: scan.skipped,
    scan,
  };
}
