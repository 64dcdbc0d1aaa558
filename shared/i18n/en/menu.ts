export const menu = {
  edit: 'Edit',
  view: 'View',
  help: 'Help',
  docs: 'Ascend documentation',
} as const;
