import { codeStage } from '../../../../shared/stages/code';
import { codeReport } from './report';
import { defineStage } from '../define';
import { codeOutcomes, scanAndStore } from './scan-and-store';
import { resolveCodeFolder } from './folder';
import { codeHandlers } from './handlers';

/** Code migration inside a session: the scan is stored for review, one check per rule fired. */
export const codeDefinition = defineStage({
  shared: codeStage,
  report: codeReport,
  merge: 'replace',
  handlers: codeHandlers,
  prepare(input, services) {
    return { ...input, path: resolveCodeFolder(services, input.path, input) };
  },
  async run({ input, sessionId, runId, job, services }) {
    const stored = await scanAndStore(
      services.code,
      { path: input.path!, mode: input.mode, exclude: input.exclude, sessionId },
      runId,
      services.language(),
      job,
    );
    const { scan, ...result } = stored;
    return { outcomes: codeOutcomes(scan), result: { ...result, stageRunId: runId } };
  },
});
