import { appVersion } from '../paths';
import type { Finding } from './analyze-file';
import type { Rule } from './rules';

const LEVEL: Record<Finding['severity'], 'error' | 'warning' | 'note'> = {
  error: 'error',
  warning: 'warning',
  info: 'note',
};

/** SARIF 2.1.0 for code-scanning UIs and CI: one result per finding, fixes as replacements. */
export function toSarif(findings: Finding[], rules: Rule[], lang: 'en' | 'zh-CN'): object {
  const used = [...new Set(findings.map((f) => f.ruleId))].sort();
  const ruleById = new Map(rules.map((r) => [r.id, r]));
  return {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'amw',
            fullName: 'Ascend Migration Workbench',
            version: appVersion(),
            rules: used.map((id) => {
              const r = ruleById.get(id);
              const sample = findings.find((f) => f.ruleId === id)!;
              return {
                id,
                shortDescription: {
                  text: r ? r.message[lang].replace(/\{\{\w+\}\}/g, '…') : sample.message,
                },
                fullDescription: { text: r ? r.why[lang] : sample.message },
                ...(r?.docs ? { helpUri: r.docs } : {}),
                ...(r?.fix ? { help: { text: r.fix[lang] } } : {}),
                defaultConfiguration: { level: LEVEL[r?.severity ?? sample.severity] },
                properties: { category: r?.category ?? sample.category },
              };
            }),
          },
        },
        results: findings.map((f) => ({
          ruleId: f.ruleId,
          ruleIndex: used.indexOf(f.ruleId),
          level: LEVEL[f.severity],
          message: { text: f.message },
          locations: [
            {
              physicalLocation: {
                artifactLocation: { uri: f.file, uriBaseId: '%SRCROOT%' },
                region: {
                  startLine: f.line,
                  startColumn: f.column,
                  endLine: f.endLine,
                  endColumn: f.endColumn,
                },
              },
            },
          ],
        })),
        columnKind: 'utf16CodeUnits',
      },
    ],
  };
}
