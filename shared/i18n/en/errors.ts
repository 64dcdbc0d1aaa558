export const errors = {
  /** SSH connection failures, by cause (the engine sends the key with host, port, where). */
  ssh: {
    dns: 'The host name {{host}} cannot be resolved. Check the spelling, the HostName in your ssh config, or your DNS/VPN.',
    refused:
      '{{where}} refused the connection. Is sshd running there, and is {{port}} the right port?',
    unreachable:
      '{{where}} did not answer ({{errno}}). Check the address, firewalls, or whether you need a jump host.',
    reset:
      '{{where}} reset the connection during the handshake. The server may limit connections (MaxStartups) or block your address.',
    handshakeTimeout:
      '{{where}} did not complete the SSH handshake in time. Check the address, firewalls, or whether you need a jump host.',
    auth: '{{username}}@{{where}} rejected every login method tried: {{methods}}. Check the user name, that your public key is in ~/.ssh/authorized_keys there, or give a password.',
    authNone:
      '{{username}}@{{where}} needs a login method, and none was available (no agent, no key, no password). Give a key file or a password.',
    handshake: 'The SSH handshake with {{where}} failed ({{cause}}).',
    other: 'The connection to {{where}} failed ({{cause}}).',
  },
  VALIDATION: 'Some input is not valid: {{message}}',
  UNKNOWN_METHOD: 'The engine does not know this request: {{message}}',
  BAD_MESSAGE: 'The request could not be read: {{message}}',
  PAYLOAD_TOO_LARGE: 'The request is too large: {{message}}',
  NOT_FOUND: 'Not found: {{message}}',
  CANCELLED: 'Cancelled.',
  CONFLICT: 'Conflict: {{message}}',
  UNAUTHORIZED: 'Not authorised. Open the address that `amw serve` printed.',
  DB_TOO_NEW:
    'The database {{dbPath}} has schema version {{dbVersion}}, but this version of the workbench knows only up to {{appVersion}}. Update the workbench, or use another database with --db.',
  DB_MIGRATION_EDITED: 'A migration was changed after it was applied to {{dbPath}}: {{message}}',
  DB_CORRUPT:
    'The database file {{dbPath}} is damaged or is not a workbench database. Run `amw db check` to see the damage; then restore the latest copy from the backups folder next to it (made by `amw db backup`), or move the file away to start afresh.',
  DB_DISK_FULL:
    'The disk is full: {{message}}. Nothing more was written; free some space and try again.',
  DB_UNWRITABLE:
    'Cannot write the database file {{dbPath}}. Check its permissions, or choose another place with --db or AMW_HOME.',
  DB_BUSY: 'The database file {{dbPath}} is locked by another process. Close it and try again.',
  HOST_KEY_MISMATCH: 'The host key changed: {{message}}',
  HOST_KEY_UNKNOWN: 'Unknown host key: {{message}}',
  AUTH_FAILED: 'Authentication failed: {{message}}',
  CONNECT_TIMEOUT: 'Connection timed out: {{message}}',
  CONNECTION_REFUSED: 'Connection refused: {{message}}',
  DNS: 'Host name not found: {{message}}',
  DISCONNECTED: 'The connection dropped: {{message}}',
  JUMP_FAILED: 'The jump host failed: {{message}}',
  KEY_UNREADABLE: 'The private key cannot be used: {{message}}',
  COMMAND_TIMEOUT: 'The remote command took too long: {{message}}',
  SSH_CONFIG: 'The SSH config cannot be read: {{message}}',
  PROBE_FAILED: 'The probe on the host did not produce a readable result: {{message}}',
  INTERNAL: 'Unexpected error: {{message}}',
} as const;
