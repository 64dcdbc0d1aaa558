export const nav = {
  hosts: 'Hosts',
  sessions: 'Sessions',
  code: 'Code',
  reports: 'Reports',
  settings: 'Settings',
  main: 'Main navigation',
} as const;
