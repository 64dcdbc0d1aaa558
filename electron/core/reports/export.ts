import type { Report, ReportFormat } from '../../../shared/api';
import { loadRules } from '../analyzer/rules';
import { toSarif } from '../analyzer/sarif';
import { junitFromReport } from './junit';
import type { PrintPdf } from './pdf';
import { renderHtml } from './render-html';
import { renderMarkdown } from './render-md';

export interface ExportedReport {
  fileName: string;
  mediaType: string;
  text?: string;
  base64?: string;
}

const slug = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 60) || 'session';

/** One format of a report, named for saving: `amw-report-12-port-nanogpt.html`. */
export async function exportReport(
  r: Report,
  format: ReportFormat,
  printPdf: PrintPdf,
): Promise<ExportedReport> {
  const base = `amw-report-${r.session.id}-${slug(r.session.title)}`;
  switch (format) {
    case 'json':
      return {
        fileName: `${base}.amw.json`,
        mediaType: 'application/json',
        text: `${JSON.stringify(r, null, 2)}\n`,
      };
    case 'md':
      return { fileName: `${base}.md`, mediaType: 'text/markdown', text: renderMarkdown(r) };
    case 'html':
      return { fileName: `${base}.html`, mediaType: 'text/html', text: renderHtml(r) };
    case 'pdf':
      return {
        fileName: `${base}.pdf`,
        mediaType: 'application/pdf',
        base64: (await printPdf(renderHtml(r))).toString('base64'),
      };
    case 'sarif':
      return {
        fileName: `${base}.sarif`,
        mediaType: 'application/sarif+json',
        text: `${JSON.stringify(toSarif(r.code?.findings ?? [], loadRules(), r.language), null, 2)}\n`,
      };
    case 'junit':
      return { fileName: `${base}.xml`, mediaType: 'application/xml', text: junitFromReport(r) };
  }
}
