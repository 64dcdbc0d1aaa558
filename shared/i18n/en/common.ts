export const common = {
  loading: 'Loading…',
  entryFormat:
    'FILE:FUNCTION — a Python file on the host and the function in it that returns (model, batches), e.g. train/model.py:build',
  /** Where a stage ran when it ran on this machine (stored as `(local)`). */
  thisMachine: 'this machine',
  back: 'Back',
  cancel: 'Cancel',
  close: 'Close',
  retry: 'Retry',
  edit: 'Edit',
  /** How engine messages join sentences and lists in this language. */
  join: { sentences: ' ', list: ', ' },
  /** What follows a label before its value (full-width in Chinese). */
  colon: ': ',
  /** A remark after a phrase, in the language's own brackets. */
  paren: ' ({{text}})',
  fieldRequired: 'Fill in this field.',
  fieldFormat: 'This is not in the expected format.',
  /** Evidence cut short: how many items were left out. */
  more: '… {{count}} more',
  notYet: 'Not in this build yet',
  howToStart: 'How to start',
  cli: 'From the command line',
  connectionLost: 'Connection to the workbench engine lost. Reconnecting…',
  reconnected: 'Reconnected.',
} as const;
