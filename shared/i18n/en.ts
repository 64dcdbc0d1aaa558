/**
 * English strings. zh-CN.ts must have exactly the same keys (the type and a unit test say so).
 * Interpolation uses i18next's {{name}} syntax in the UI and the CLI alike.
 */
export const en = {
  app: {
    name: 'Ascend Migration Workbench',
    shortName: 'AMW',
    tagline: 'Move PyTorch from CUDA GPUs to Ascend NPUs, with evidence.',
  },
  menu: {
    edit: 'Edit',
    view: 'View',
    help: 'Help',
    docs: 'Ascend documentation',
  },
  nav: {
    hosts: 'Hosts',
    sessions: 'Sessions',
    code: 'Code',
    reports: 'Reports',
    settings: 'Settings',
    main: 'Main navigation',
  },
  common: {
    loading: 'Loading…',
    cancel: 'Cancel',
    close: 'Close',
    retry: 'Retry',
    notYet: 'Not in this build yet',
    howToStart: 'How to start',
    cli: 'From the command line',
    connectionLost: 'Connection to the workbench engine lost. Reconnecting…',
    reconnected: 'Reconnected.',
  },
  pages: {
    hosts: {
      title: 'Ascend hosts',
      lead: 'Connect the machines you are migrating to. The workbench reads their NPUs, health and CANN, driver, torch and torch_npu versions over SSH, and shows where the machines of a cluster disagree.',
      step1:
        'Import hosts from ~/.ssh/config (Include and ProxyJump are honoured) or add one by hand.',
      step2: 'Confirm each host key by its SHA256 fingerprint; a changed key is refused.',
      step3: 'Take an inventory: chips, HBM, health and the version matrix, stored as a snapshot.',
    },
    sessions: {
      title: 'Migration sessions',
      lead: 'A session walks one project through the stages — environment, code, operator coverage, precision, distributed (HCCL), profiling — with evidence, gates and waivers, so progress across runs is visible.',
      step1:
        'Create a project: its code, its target hosts and the GPU baseline you compare against.',
      step2:
        'Run the environment stage first: the version matrix breaks migrations before code does.',
      step3: 'Fix or waive each failing check with a reason; rerun until the stage passes.',
    },
    code: {
      title: 'Code migration',
      lead: 'Scan a PyTorch codebase for CUDA-only constructs — devices, AMP, NCCL, fused kernels, CUDA extensions — and review each proposed NPU change as a diff before applying it.',
      step1: 'Open a local project folder; no NPU or host is needed for this.',
      step2: 'Review the findings per file and accept or reject each hunk.',
      step3: 'Export a patch, or apply the accepted changes (a backup is made first).',
    },
    reports: {
      title: 'Reports',
      lead: 'Export a session as one evidence chain for your team: HTML, Markdown, PDF, JSON, SARIF or JUnit. Reviewers can import the JSON, comment and sign off.',
      step1: 'Finish at least one stage of a session.',
      step2: 'Pick a format and the report language; secrets are always redacted.',
      step3: 'Share the file; teammates import it to review without host access.',
    },
    settings: {
      title: 'Settings',
      language: 'Language',
      theme: 'Theme',
      themeLight: 'Light',
      themeDark: 'Dark',
      themeSystem: 'Follow the system',
      storage: 'Data',
      dataDir: 'Data directory',
      dbPath: 'Database',
      schema: 'Schema version',
      version: 'Version',
      maintenance: 'Database maintenance',
      maintenanceLead: 'Both run as jobs: watch them in the jobs drawer and cancel them there.',
      backup: 'Back up database',
      check: 'Check database and evidence files',
    },
  },
  jobs: {
    title: 'Jobs',
    open: 'Jobs',
    running_one: '{{count}} running',
    running_other: '{{count}} running',
    empty:
      'No jobs yet. Long work — backups, inventories, stage runs — shows up here with its progress.',
    cancel: 'Cancel',
    result: 'Result',
    status: {
      queued: 'Queued',
      running: 'Running',
      succeeded: 'Done',
      failed: 'Failed',
      cancelled: 'Cancelled',
      interrupted: 'Interrupted',
    },
    kind: {
      maintenance_backup: 'Database backup',
      maintenance_check: 'Database check',
    },
    step: {
      copyPages: 'Copied {{done}} of {{total}} pages',
      integrity: 'Checking database integrity',
      foreignKeys: 'Checking references between tables',
      artifacts: 'Verified {{done}} of {{total}} evidence files',
    },
  },
  errors: {
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
      'The database file {{dbPath}} is damaged or is not a workbench database. Restore a backup or move the file away.',
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
    INTERNAL: 'Unexpected error: {{message}}',
  },
  cli: {
    description: 'Ascend Migration Workbench: move PyTorch from CUDA GPUs to Ascend NPUs.',
    usageHint: 'Run `amw --help` for usage.',
    opt: {
      db: 'database file (env AMW_DB)',
      knownHosts: 'known_hosts file for host keys (env AMW_KNOWN_HOSTS)',
      lang: 'language of messages: zh-CN or en (env AMW_LANG)',
      json: 'print machine-readable JSON',
      port: 'port to listen on (0 picks a free one)',
      bind: 'address to bind (default 127.0.0.1)',
      allowRemote: 'allow binding to a non-loopback address',
      version: 'print the version',
      help: 'show help',
    },
    arg: { npuSmiFile: 'file with the output, or - for stdin' },
    cmd: {
      info: 'show the version, data directory and database schema',
      serve: 'serve the workbench UI to a browser (token-protected)',
      settings: 'read or change settings',
      settingsGet: 'print the settings',
      settingsSet: 'change settings, e.g. language=zh-CN theme=dark',
      jobs: 'list recent jobs',
      db: 'database maintenance',
      dbBackup: 'back up the database into the data directory',
      dbCheck: 'check the database and every evidence file (exit 1 on problems)',
      help: 'show help for a command',
      parse: 'parse outputs of Ascend tools',
      parseNpuSmi: 'parse `npu-smi info` output (table or -t key : value); - reads stdin',
    },
    titles: {
      usage: 'Usage:',
      options: 'Options:',
      commands: 'Commands:',
      arguments: 'Arguments:',
    },
    serving: 'Serving the workbench; press Ctrl+C to stop.',
    stopped: 'Stopped.',
    backupDone: 'Backup written: {{file}} ({{bytes}} bytes)',
    checkOk: 'Database and {{count}} evidence files are intact.',
    checkProblems:
      'Problems found: {{integrity}} integrity, {{fk}} reference, {{missing}} missing and {{corrupt}} damaged evidence files.',
    noJobs: 'No jobs.',
    badSetting: 'Expected key=value with key one of: {{keys}}',
    electronMissing: 'Electron runtime not available ({{reason}}); starting serve mode instead.',
  },
} as const;

/** Same keys, any string values: the shape every language must fill. */
type Widen<T> = { -readonly [K in keyof T]: T[K] extends string ? string : Widen<T[K]> };
export type Messages = Widen<typeof en>;
