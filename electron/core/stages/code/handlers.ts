import { join } from 'node:path';
import { lineDiff } from '../../../../shared/diff/line-diff';
import { resolveCodeFolder } from './folder';
import { scanAndStore } from './scan-and-store';
import { runStage } from '../run-stage';
import { analyzeHandler } from './analyze-handler';
import type { DomainHandlers, MethodsOf, Services } from '../../api/services';

export function codeHandlers(s: Services): DomainHandlers<MethodsOf<'code'>> {
  return {
    'code.scan': ({ path, mode, sessionId, exclude }) => {
      // inside a session the scan is that session's code stage run; outside, just a scan to review
      if (sessionId) {
        const started = runStage(s, { stage: 'code', sessionId, path, mode, exclude });
        return { jobId: started.jobId, stageRunId: started.stageRunId };
      }
      const folder = resolveCodeFolder(s, path, {});
      const job = s.jobs.start('code.scan', { path: folder, sessionId: null }, (ctx) =>
        scanAndStore(
          s.code,
          { path: folder, mode, exclude, sessionId: null },
          null,
          s.language(),
          ctx,
        ).then(({ scan: _scan, ...result }) => ({ ...result, stageRunId: null })),
      );
      return { jobId: job.id, stageRunId: null };
    },
    'code.analyze': analyzeHandler(s.language),
    'code.scans': ({ sessionId }) => s.code.list(sessionId),
    'code.get': ({ scanId }) => s.code.get(scanId),
    'code.file': ({ scanId, file }) => {
      const content = s.code.file(scanId, file);
      const shown =
        content.reviewed ?? (content.review === 'rejected' ? content.original : content.proposed);
      return { ...content, diff: lineDiff(content.original, shown) };
    },
    'code.review': ({ scanId, file, review, text, rejected }) =>
      s.code.review(scanId, file, review, text, rejected),
    'code.patch': ({ scanId }) => s.code.patch(scanId),
    'code.apply': ({ scanId }) => s.code.apply(scanId, join(s.location.dataDir, 'backups')),
  };
}
