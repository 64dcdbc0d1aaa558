import type { Widen } from '../../../i18n/en';

/** Namespace `stage-code`. */
export const en = {
  cudaSource: '{{file}} is CUDA C++ source: it has to be ported.',
  name: 'Code',
  files_one: '{{count}} file',
  files_other: '{{count}} files',
  findings_one: '{{count}} finding in {{files}}.',
  findings_other: '{{count}} findings in {{files}}.',
  noPath:
    'The code stage needs a folder: give one, or set the project’s code location to a folder on this machine.',
  notFolder: '{{path}} is not a folder on this machine.',
} as const;

export type CodeMessages = Widen<typeof en>;
