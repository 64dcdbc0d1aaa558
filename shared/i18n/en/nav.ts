export const nav = {
  hosts: 'Hosts',
  sessions: 'Sessions',
  code: 'Code',
  reports: 'Reports',
  doctor: 'Doctor',
  settings: 'Settings',
  main: 'Main navigation',
} as const;
