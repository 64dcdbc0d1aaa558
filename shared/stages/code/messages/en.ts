import type { Widen } from '../../../i18n/en';

/** Namespace `stage-code`. */
export const en = {
  cudaSource: '{{file}} is CUDA C++ source: it has to be ported.',
  unreadable: '{{file}} could not be read: {{error}}',
  syntaxErrors: '{{file}}: Python syntax errors; findings there may be incomplete',
  tooCostly:
    '{{file}}: not analysed: it was given up after {{seconds}} s (syntax errors or generated text make it too costly to read); fix its syntax or exclude it from the scan',
  analysisFailed:
    '{{file}}: not analysed: the analysis failed on it ({{error}}); please report it with the file',
  name: 'Code',
  files_one: '{{count}} file',
  files_other: '{{count}} files',
  // as stored by earlier versions (a stored summary is worded again when shown)
  findings_one: '{{count}} finding in {{files}}.',
  findings_other: '{{count}} findings in {{files}}.',
  advice_one: '{{count}} optional improvement in {{files}}.',
  advice_other: '{{count}} optional improvements in {{files}}.',
  // the card says what was found, where first: a count alone sent the reader to raw evidence
  findingsAt_one: '{{count}} finding in {{files}}, at {{at}}: {{what}}',
  findingsAt_other: '{{count}} findings in {{files}}; the first at {{at}}: {{what}}',
  // advice passes: its card does not read as something found wrong
  adviceAt_one: '{{count}} optional improvement in {{files}}, at {{at}}: {{what}}',
  adviceAt_other: '{{count}} optional improvements in {{files}}; the first at {{at}}: {{what}}',
  noPath:
    'The code stage needs a folder: give one, or set the project’s code location to a folder on this machine.',
  notFolder: '{{path}} is not a folder on this machine.',
  report: {
    title: 'Code migration',
    summary:
      'Scan #{{scanId}} of {{root}} ({{mode}}): {{files}}, {{lines}}; {{error}}, {{warning}}, {{info}}. Effort: {{level}}.',
    findings: 'Findings',
    file: 'File',
    rule: 'Rule',
    diffs: 'Accepted changes',
    noDiffs: 'No change has been accepted yet.',
    history: 'Findings across scans',
  },
} as const;

export type CodeMessages = Widen<typeof en>;
