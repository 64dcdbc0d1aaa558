import { isAbsolute } from 'node:path';
import type { CodeAnalysis, Language } from '../../../../shared/api';
import { AmwError } from '../../../../shared/errors';
import { msg } from '../../../../shared/api/text';
import { migratedFiles } from '../../analyzer/fix';
import { pythonParser } from '../../analyzer/python-parser';
import { scanProject } from '../../analyzer/scan';
import type { Handler } from '../../api/registry';

/**
 * `code.analyze`: a scan that is read, not stored. It needs no database, so the CLI's one-shot
 * `amw scan` dispatches it on a core that opens none (local-core.ts); the full core serves it too.
 * `oneThread`: a one-shot process scans on its own thread — starting worker threads (each loads
 * the analyzer and compiles the parser) cost a 1760-file tree 15-30% more CPU-seconds and 75%
 * more peak memory, and won no wall time on two busy cores; the app and serve keep warm workers.
 */
export function analyzeHandler(
  language: () => Language,
  opts: { oneThread?: boolean } = {},
): Handler<'code.analyze'> {
  return async ({ path, mode, exclude, migrate, lang }): Promise<CodeAnalysis> => {
    if (!isAbsolute(path))
      throw new AmwError('VALIDATION', msg('errors.text.scanPathAbsolute', { path }), {
        issues: [{ path: 'path', message: 'stage-code:noPath' }],
      });
    // without migrate no file's text is kept: memory is bounded by the largest file
    const scan = await scanProject(path, {
      exclude,
      lang: lang ?? language(),
      keepSources: migrate,
      ...(opts.oneThread ? { workerThreshold: Infinity } : {}),
    });
    const out: CodeAnalysis = {
      root: scan.root,
      files: scan.files,
      lines: scan.lines,
      findings: scan.findings,
      effort: scan.effort,
      warnings: scan.warnings,
      skipped: scan.skipped,
    };
    if (!migrate) return out;
    const changed = migratedFiles(scan, mode, await pythonParser());
    return {
      ...out,
      changed: [...changed].map(([file, c]) => ({
        file,
        before: c.before,
        after: c.after,
        parses: c.parses,
      })),
    };
  };
}
