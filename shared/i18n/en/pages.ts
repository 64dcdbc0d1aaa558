export const pages = {
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
    step1: 'Create a project: its code, its target hosts and the GPU baseline you compare against.',
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
    backupDone: 'Backup written to {{file}} ({{bytes}} bytes).',
    checkOk_one:
      'Database OK: its integrity and references check out, and {{count}} evidence file matches its checksum.',
    checkOk_other:
      'Database OK: its integrity and references check out, and {{count}} evidence files match their checksums.',
    checkProblems:
      'The check found problems: {{integrity}} integrity, {{fk}} reference, {{missing}} missing and {{corrupt}} damaged evidence files.',
    fileProblem: {
      missing: 'Missing: {{kind}}',
      damaged: 'Damaged (its checksum differs): {{kind}}',
    },
    artifactKind: {
      'inventory-probe': 'a host inventory probe',
      'ops-trace': 'an operator trace',
      profile: 'a profile',
      'precision-dump': 'a precision dump',
      distributed: 'a distributed-check result',
      'code.original': 'a scanned file as it was',
      'code.proposed': 'a proposed file',
      'code.reviewed': 'a reviewed file',
      report: 'a report',
    },
    checkRestore:
      'To recover, stop the workbench and put the newest file from the backups folder of the data directory in place of the database.',
  },
} as const;
