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
  /** Engine errors' own explanations (AmwError text), by what went wrong. */
  /** Why a file or folder could not be read, for the common reasons (Node's own text is English). */
  fs: {
    noSuchPath: 'no such file or folder',
    notAFolderOnPath: 'a part of the path is not a folder',
    permissionDenied: 'permission denied',
    isAFolder: 'it is a folder',
    symlinkLoop: 'too many symbolic links (a loop?)',
    nameTooLong: 'the name is too long',
    tooManyOpen: 'too many files open; try again',
    ioError: 'input/output error from the disk',
  },
  text: {
    noSession: 'No session {{id}}.',
    noProject: 'No project named {{name}}.',
    noCheckRun:
      'Check {{check}} has not run on {{target}} in session {{session}}: run it before waiving it.',
    noStageRun: 'No stage run {{id}}.',
    noHost: 'No host named {{name}}. See: amw hosts list',
    noSnapshot: 'No inventory snapshot {{id}}.',
    noJob: 'No job with id {{id}}.',
    noScan: 'No code scan {{id}}.',
    fileNotInScan: '{{file}} is not part of code scan {{id}}.',
    noImportedReport: 'No imported report {{id}}.',
    reviewNeedsReason: 'A request for changes needs a reason: say what should change.',
    reviewBlocked:
      'This session cannot be approved while it is blocked: fix or waive the failing checks first, or request changes.',
    reviewNothingRan:
      'This session cannot be approved yet: nothing has run in it. Run a stage first.',
    notAFolder: '{{path}} is not a folder.',
    notAFileOrFolder: '{{path}} is not a file or a folder.',
    notAFolderHere: '{{path}} is not a folder on this machine.',
    pathMissing: '{{path}} does not exist.',
    cannotRead: 'Cannot read {{path}}: {{error}}',
    notFileOrFolder: '{{path}} is neither a file nor a folder.',
    notFolderNorRun: '{{arg}} is neither a folder nor a stored run id.',
    noProfile: 'Stage run {{id}} has no stored profile.',
    noProfileOf:
      'Stage run {{id}} ended as “{{status}}” and stored no profile: there is nothing to show or compare.',
    noTrace: 'Stage run {{id}} has no trace_view.json to show.',
    traceGone: 'The trace {{path}} is no longer there: import the folder again.',
    noPrecision: 'Stage run {{id}} has no precision comparison.',
    noOpTrace: 'Stage run {{id}} has no operator trace.',
    noDistributed: 'Stage run {{id}} has no stored distributed result.',
    monitorGone: 'That monitor is not running.',
    terminalGone: 'That terminal is closed.',
    promptGone: 'That question has already been answered or has expired.',
    hostKeyPromptGone: 'That host key question has already been answered or has expired.',
    projectExists: 'A project named {{name}} already exists.',
    hostExists: 'A host named {{name}} already exists.',
    hostNameHasHistory:
      "{{name}} still names the runs, waivers or sessions of a host removed before: pick another name, so the two machines' histories stay apart.",
    hostBusy: '{{name}} is in use by a running job ({{job}}): rename it when that has ended.',
    jumpInUse: '{{name}} is the jump host of {{users}}; change those first.',
    alreadyApplied: '{{file}} was already applied; scan again to review anew.',
    changedSinceScan:
      'These files changed since the scan, so nothing was written: {{files}}. Scan again and review the new proposal.',
    jumpSelf: 'A host cannot jump through itself ({{jump}}).',
    localFixed:
      'The built-in host {{name}} is this machine, reached without SSH: only its group and tags can change.',
    localKept:
      'The built-in host {{name}} is this machine: it cannot be removed, and its inventories and runs stay.',
    jumpLocal:
      'The built-in host {{jump}} is this machine, not an SSH server: it cannot be a jump host. Add this machine by its address to hop through it.',
    jumpUnknown: 'The jump host {{jump}} is not in the workbench; add it first.',
    jumpLoop: 'Jumping through {{jump}} would loop back to {{self}}.',
    jumpChainLoops: 'The jump chain of {{name}} loops.',
    editedNeedsText: 'An edited review needs the reviewed text.',
    nothingToApply: 'Nothing to apply: accept or edit at least one file first.',
    outsideRoot: '{{file}} is outside {{root}}.',
    notJson: 'Not JSON: {{error}}',
    notReport: 'Not an amw report (amw.report/v1): {{problems}}',
    noStageInBuild: 'No stage {{stage}} in this build.',
    noSuchChecks: 'No such checks: {{checks}}',
    scanPathAbsolute: 'The folder to scan must be an absolute path, not {{path}}.',
    localNoTerminal:
      'This machine (local) is not reached over SSH: use a terminal of your own on it.',
    passwordsDesktopOnly:
      'Passwords can be remembered only in the desktop app, encrypted by the system keychain. Serve mode and the CLI never store them: type it when asked, or use --password-stdin.',
    sessionIdNumber: '--session takes a session id (a number), not {{value}}.',
    hostKeyRevoked:
      'The host key of {{where}} ({{fingerprint}}) is marked @revoked in {{file}} line {{line}}. Refusing to connect.',
    hostKeyChanged:
      'The host key of {{where}} has CHANGED. Stored: {{stored}}; offered: {{offered}}. This can mean the host was reinstalled, or that someone is intercepting the connection. If the change is expected, remove line {{line}} of {{file}} (or run: {{command}}) and connect again.',
    hostKeyUnknown:
      "The host key of {{where}} is not known: {{keyType}} {{fingerprint}}. Confirm it (in the app, or with --accept-new-host-key after checking the fingerprint with the host's administrator).",
    commandStartFailed: 'Could not start a remote command: {{error}}',
    localStartFailed: 'Could not start a local command: {{error}}',
    commandTimeout: 'No result after {{seconds}} s; the command was stopped.',
    droppedDuring:
      'The connection dropped while the command was running; nothing was stored. Try again.',
    remoteFailed: 'The remote command failed: {{error}}',
    localFailed: 'The local command failed: {{error}}',
    sftpUnavailable: 'SFTP is not available: {{error}}',
    sftpFileFailed: 'SFTP {{path}}: {{error}}',
    checksumFailed: 'Cannot checksum {{path}} on the host: {{error}}',
    copyFailed: 'Copying {{from}} to {{to}} failed: {{error}}',
    copyDiffers: 'The copy of {{from}} at {{to}} differs from the original.',
    notAFile: '{{path}} is not a file.',
    closedDuringHandshake: '{{where}} closed the connection during the handshake.',
    keyTooOpen:
      'Permissions {{mode}} for {{path}} are too open: a private key must not be readable by others. Run: chmod 600 {{path}}',
    keyUnreadable: 'Cannot read the key file {{path}}: {{error}}',
    keyNeedsPassphrase:
      'The key {{path}} is protected by a passphrase and none was given. Add it to ssh-agent (ssh-add {{path}}) or enter the passphrase in the app.',
    keyWrongPassphrase: 'Wrong passphrase for {{path}}.',
    keyNotUsable: '{{path}} is not a private key ssh can use: {{error}}',
    keyNoPrivate: '{{path}} holds no private key (is it the .pub file?).',
    configNotRegular:
      '{{path}} is not a regular file (a FIFO, device or socket); a config is never read from one.',
    configTooLarge:
      '{{path}} is too large for an ssh config ({{size}} bytes; the limit is {{limit}}).',
    configIncludeDepth: 'Include nesting deeper than {{depth}} at {{path}}',
    configUnparsable: '{{path}} cannot be parsed: {{error}}',
    configTooMany:
      '{{path}} has {{hosts}} hosts and {{blocks}} pattern or Match blocks: too many to resolve.',
    proxyJumpUnreadable: 'Cannot read the ProxyJump hop {{hop}}',
    monitorStartFailed: 'Could not start the monitor: {{error}}',
    npuSmiMissing:
      'npu-smi is not on this host: no Ascend driver is installed (or it is not on the PATH).',
    monitorClosed: 'The monitor channel closed (exit code {{code}}). {{stderr}}',
    shellFailed: 'Could not open a shell: {{error}}',
    noPythonOps:
      '{{host}} has no python3 on the PATH of a non-interactive shell: the op capture needs Python with torch.',
    noPythonProfiling:
      '{{host}} has no python3 on the PATH of a non-interactive shell: profiling needs Python with torch.',
    opsNoResult: 'The op capture printed no result. Last output: {{output}}',
    opsNotJson: 'The op capture printed a result that is not JSON.',
    opsNoTable: 'The op capture result has no op table.',
    opsMalformed: 'The op capture result is malformed at {{at}}: {{error}}',
    profilingNoResult: 'The profiling run printed no result. Last output: {{output}}',
    profilingNotJson: 'The profiling run printed a result that is not JSON.',
    dumpNoTable: 'The dump on {{host}} has no module table.',
    probeNotJson: 'The {{probe}} probe did not print JSON. First output: {{output}}',
    probeNoSections: 'The {{probe}} probe printed JSON without sections.',
    listFailed: 'Cannot list {{dir}} on {{host}}: {{error}}',
    changedWhileCopied: '{{path}} from {{host}} changed while copied (sha256 differs).',
    pdfNeedsChromium:
      'PDF export needs Chromium (/usr/bin/chromium, or set AMW_CHROMIUM). The HTML export prints to PDF from any browser.',
    noAnswerWithin: 'no answer within {{ms}} ms',
    stdinForCli: 'stdin is for the CLI; give a file or a folder.',
    portRange: '--port must be 0..65535, not {{value}}',
    reportSessionId: 'Give a session id (a number), not {{value}}.',
    reportFormat: '--format is one of {{formats}}.',
    scanMode: '--mode is rewrite or transfer, not {{value}}',
    fixNeedsOut: '--fix writes a migrated copy: give it --out DIR (the original is never changed).',
    outInside: '--out must be outside the scanned folder.',
    outNotEmpty: '{{path}} exists and is not empty.',
    oneSecretOnStdin:
      'Standard input carries one secret: give the password with --password-stdin and the key passphrase in AMW_KEY_PASSPHRASE.',
    fileTooLarge: '{{what}} is larger than {{limit}} MiB; nothing was parsed.',
    stdinTooLarge: 'stdin is larger than {{limit}} bytes; nothing was parsed.',
    bindRefused:
      'Refusing to bind to {{bind}}: serve mode listens on 127.0.0.1 unless --allow-remote is given as well.',
    weightsChecksum:
      'The weights and inputs from {{from}} arrived with sha256 {{got}}, expected {{expected}}: the transfer was damaged.',
    jumpCannotForward:
      'The jump host {{jump}} could not open a connection to {{target}} ({{error}}). Check that the target is reachable from the jump host and that it allows TCP forwarding.',
    jumpFailed: 'Jump host {{jump}}: {{error}}',
    engineClosed: 'The connection to the workbench engine closed.',
    diskFull:
      'no space left on the disk that holds {{dbPath}} ({{free}} bytes free; SQLite: {{reason}})',
    dbOpenFailed: 'Cannot open the database {{dbPath}}: {{reason}}',
  },
  supportCode: 'Error code (for support): {{code}}',
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
