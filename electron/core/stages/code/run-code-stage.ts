import type { CheckOutcome, FixMode, Language } from '../../../../shared/api';
import { AmwError } from '../../../../shared/errors';
import { migratedFiles } from '../../analyzer/fix';
import { pythonParser } from '../../analyzer/python-parser';
import { loadRules } from '../../analyzer/rules';
import { scanProject, type ScanResult } from '../../analyzer/scan';
import type { CodeReviewStore } from '../../code-review/store';
import type { JobContext } from '../../jobs/runner';
import type { SessionRepository } from '../../sessions/repository';
import { stageStatus } from '../../sessions/repository';

export interface CodeStageDeps {
  store: CodeReviewStore;
  sessions: SessionRepository;
}

/** One check per rule that fired: errors fail the stage, warnings warn, advice passes. */
export function codeOutcomes(scan: ScanResult): CheckOutcome[] {
  const rules = new Map(loadRules().map((r) => [r.id, r]));
  const byRule = new Map<string, ScanResult['findings']>();
  for (const f of scan.findings) byRule.set(f.ruleId, [...(byRule.get(f.ruleId) ?? []), f]);
  return [...byRule].map(([id, list]) => {
    const r = rules.get(id)!;
    const files = new Set(list.map((f) => f.file)).size;
    return {
      id,
      title: r.title,
      status: r.severity === 'error' ? 'fail' : r.severity === 'warning' ? 'warn' : 'pass',
      summary: {
        en: `${list.length} finding${list.length === 1 ? '' : 's'} in ${files} file${files === 1 ? '' : 's'}.`,
        'zh-CN': `${files} 个文件中有 ${list.length} 处。`,
      },
      evidence: {
        count: list.length,
        at: list.slice(0, 50).map((f) => `${f.file}:${f.line}:${f.column}`),
      },
      remediation: r.fix ?? r.why,
    };
  });
}

/**
 * Scans the folder, builds the proposal in the chosen mode and stores scan, findings and texts in
 * one transaction; inside a session the stage run gets one check per rule. A cancel or an error
 * marks the run and stores nothing half.
 */
export async function runCodeScan(
  deps: CodeStageDeps,
  input: { path: string; mode: FixMode; exclude?: string[]; sessionId: number | null },
  runId: number | null,
  lang: Language,
  ctx: JobContext,
): Promise<{ scanId: number; findings: number; changedFiles: number }> {
  try {
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
    const scanId = deps.store.save({
      sessionId: input.sessionId,
      stageRunId: runId,
      root: scan.root,
      mode: input.mode,
      files: scan.files,
      lines: scan.lines,
      effort: scan.effort,
      warnings: scan.warnings,
      findings: scan.findings,
      texts,
    });
    if (runId !== null) {
      const outcomes = codeOutcomes(scan);
      deps.sessions.finishRun(runId, stageStatus(outcomes), outcomes);
    }
    ctx.progress(1, { key: 'scanStored' });
    return {
      scanId,
      findings: scan.findings.length,
      changedFiles: [...texts.values()].filter((t) => t.original !== t.proposed).length,
    };
  } catch (err) {
    if (runId !== null) {
      const cancelled = ctx.signal.aborted || (err instanceof AmwError && err.code === 'CANCELLED');
      deps.sessions.markRun(runId, cancelled ? 'cancelled' : 'error');
    }
    throw err;
  }
}
