import type { Language } from '../../../../shared/api';
import { msg } from '../../../../shared/api/text';
import { AmwError } from '../../../../shared/errors';
import { buildReport } from '../../reports/build';
import { exportReport } from '../../reports/export';
import type { ReportSource } from '../../reports/review-store';
import type { DomainHandlers, MethodsOf, Services } from '../services';

export function reportsHandlers(s: Services): DomainHandlers<MethodsOf<'reports'>> {
  const readArtifact = (sha: string) => s.artifacts.readText(sha);
  /** A session's report is built fresh; an imported one is read back as it came. */
  const report = (source: ReportSource, language: Language | undefined, hideNames: boolean) =>
    'importId' in source
      ? s.reviews.importedReport(source.importId, readArtifact)
      : buildReport(s, source.sessionId, { language: language ?? s.language(), hideNames });
  return {
    'reports.build': ({ source, language, hideNames }) => report(source, language, hideNames),
    'reports.export': ({ source, format, language, hideNames }) =>
      exportReport(report(source, language, hideNames), format, s.printPdf),
    'reports.import': ({ json }) => s.reviews.import(json),
    'reports.imported': () => s.reviews.importedList(),
    'reports.comment': ({ source, target, author, text }) => {
      s.reviews.comment(source, target, author, text);
      return { ok: true as const };
    },
    'reports.decide': ({ source, decision, by, note }) => {
      // the same refusals as the review panel's, for every caller: a request for changes says
      // what to change, and what still blocks (failing checks nobody waived) is not approved;
      if (decision === 'changes-requested' && !note.trim())
        throw new AmwError('VALIDATION', msg('errors.text.reviewNeedsReason'));
      // …and a session where nothing ran has nothing to approve
      const readiness =
        decision === 'approve' ? report(source, undefined, false).summary.readiness : null;
      if (readiness === 'blocked') throw new AmwError('CONFLICT', msg('errors.text.reviewBlocked'));
      if (readiness === 'not-started')
        throw new AmwError('CONFLICT', msg('errors.text.reviewNothingRan'));
      s.reviews.decide(source, decision, by, note);
      return { ok: true as const };
    },
  };
}
