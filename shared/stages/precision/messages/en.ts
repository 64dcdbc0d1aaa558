import type { Widen } from '../../../i18n/en';

/** Namespace `stage-precision`. */
export const en = {
  name: 'Precision',
  title: {
    run: 'Dump on both hosts',
    determinism: 'Seeds and determinism',
    ampPolicy: 'Mixed-precision policy',
    lossScale: 'Loss scaling',
    firstDivergence: 'First diverging module',
    overflow: 'NaN and Inf',
  },
  side: { baseline: 'baseline', target: 'target' },
  /** A module's result word, wherever it is shown (`--json` keeps the machine values). */
  result: { pass: 'pass', warning: 'warning', error: 'error', none: 'one side only' },
  joined: '{{items}}',
  notEvaluated: 'Not evaluated: the dump did not finish.',
  modelFailed: 'The model failed on the {{side}} host {{host}}: {{type}}: {{message}}',
  fixEntry:
    'Fix the entry (FILE:FUNCTION returning (model, batches)) so it runs on both hosts, then run the stage again.',
  dumped:
    '{{modules}} module calls compared over {{batches}} batches: {{pass}} pass, {{warning}} warning, {{error}} error (baseline {{baseline}} on {{baselineDevice}}, target {{host}} on {{targetDevice}}, {{dtype}}).',
  onCpu: '{{host}} has no usable NPU: the dump ran on the CPU ({{note}}).',
  needsEntry:
    'The precision stage needs either an entry (FILE:FUNCTION returning (model, batches)) or a script.',
  stepsNeedScript: '--steps counts the model calls of a script: give --script.',
  modulesNeedTensor: '--modules chooses whose tensors tensor mode keeps: give --mode tensor.',
  scriptMode:
    "Script mode ({{steps}} call(s) of the model recorded): the weights travelled from the baseline; the inputs are the script's own, made under the same seed {{seed}}.",
  ops: {
    recorded: 'Aten ops recorded beside the modules: {{seen}}.',
    unseen: 'Aten ops asked for but never called inside the model: {{ops}}.',
    unavailable: 'Aten ops could not be recorded: {{note}}.',
    dropped: '{{count}} op calls past the cap of the dump were not recorded.',
  },
  tensorsDropped:
    "{{count}} outputs past tensor mode's byte cap kept statistics only (choose fewer modules with --modules).",
  noPython:
    '{{host}} has no python3 on the PATH of a non-interactive shell: the dump needs Python with torch.',
  noResult: 'The dump on {{host}} printed no result. Last output: {{tail}}',
  badResult: 'The dump on {{host}} printed a result that is not JSON.',
  checksum:
    'The weights and inputs arrived on {{host}} with sha256 {{got}}, expected {{expected}}: the transfer was damaged.',
  determinism: {
    on: 'Seed {{seed}} fixed and deterministic algorithms on, on both hosts.',
    off: 'Not deterministic on {{side}}: {{what}}.',
    hccl: 'HCCL_DETERMINISTIC is not set although {{world}} processes take part.',
    fix: 'Fix seeds (torch.manual_seed, torch_npu.npu.manual_seed_all), call torch.use_deterministic_algorithms(True) and, on NPU, torch_npu.npu.set_deterministic; on multi-card runs export HCCL_DETERMINISTIC=1.',
  },
  amp: {
    fp32: 'fp32 on the target: no autocast.',
    bf16: 'bf16 autocast on {{device}}.',
    preferBf16: 'fp16 autocast on {{device}}, although this chip supports bf16.',
    noBf16: 'bf16 was asked for, but the target reports no bf16 support.',
    cpuAutocast:
      'Autocast ran on the CPU ({{device}}), not on the NPU: the numbers are not the NPU kernels.',
    unavailable: 'Autocast {{dtype}} is not available on {{device}}: {{why}}',
    preferBf16Fix:
      'Prefer bf16 (same exponent range as fp32, no loss scaling needed); keep fp16 only where a kernel requires it.',
    noBf16Fix: 'Use fp16 with a GradScaler on this chip (Atlas 300I/910A have no bf16).',
    cpuFix: 'Make the NPU usable for the login user (torch.npu.is_available()) and run again.',
  },
  loss: {
    notNeeded: 'No loss scaling needed with {{dtype}}.',
    missing: 'fp16 without a GradScaler in {{file}}: small gradients underflow to zero.',
    high: 'GradScaler starts at {{init}} ({{at}}): early steps overflow and are skipped.',
    ok: 'GradScaler starts at {{init}} ({{at}}).',
    unused: 'A GradScaler is set up ({{at}}) but the policy is {{dtype}}: it is not needed.',
    fix: 'Use torch.cuda.amp.GradScaler (torch_npu.npu.amp.GradScaler on NPU) with init_scale=2**14 and the default growth_interval.',
  },
  divergence: {
    none_one: 'The one module compared passes.',
    none_other: 'All {{count}} modules compared pass.',
    at: 'First divergence: {{module}} ({{result}}) at {{source}}: {{reason}}',
    noSource: 'unknown source',
    fix: 'Look at this module first: every module before it agrees. Compare its ops (ops stage), rerun it in fp32 on the target, or dump it in tensor mode.',
    unmatched_one: '{{count}} module exists on one side only: {{names}}.',
    unmatched_other: '{{count}} modules exist on one side only: {{names}}.',
  },
  overflow: {
    none: 'No NaN or Inf in any output.',
    at: 'NaN/Inf first appear in {{module}} on the {{side}} ({{nan}} NaN, {{inf}} Inf).',
    fix: 'Check the inputs of that module (overflowing fp16 activations, log/div of zero); bf16 or a lower loss scale usually helps.',
  },
  reason: {
    shape: 'shape {{target}} against {{baseline}}',
    dtype: 'dtype {{target}} against {{baseline}}',
    nanInf: 'NaN/Inf in the target only',
    missing: 'no output on the {{side}}',
    drift: 'statistics differ by {{drift}} (limit for {{dtype}}: {{limit}})',
    cosine: 'cosine {{cosine}} (limit for {{dtype}}: {{limit}})',
    maxAbs: 'max abs error {{err}} relative to the output scale (limit for {{dtype}}: {{limit}})',
    withinTolerance: 'differs within {{dtype}} tolerance (drift {{drift}})',
    imported: 'msprobe: “{{message}}”',
    importedBare: 'msprobe gives no message',
    md5: 'checksum {{target}} against {{baseline}} (md5 mode: the bytes differ)',
    tensorUnread:
      'the tensor data of this output could not be read from the {{file}} tensor file (cut short): statistics only',
  },
  import: {
    done: 'Imported {{files}} file(s) from {{path}}: {{modules}} entries.',
    problems_one: '{{count}} problem while reading: {{first}}',
    problems_other: '{{count}} problems while reading: {{first}}',
    nothing: 'Nothing to import in {{path}}: no dump.json, compare_result csv/xlsx or config.json.',
    badXlsx: '{{file}}: not a readable xlsx workbook ({{error}}).',
    truncated: '{{file}}: not valid JSON ({{error}}); entries read before the damage are kept.',
    unknownColumns: '{{file}}: columns not known to any msprobe version: {{columns}}.',
    noNameColumn:
      '{{file}}: no "NPU Name" column (columns: {{columns}}): not an msprobe compare result.',
    missingFile: '{{dir}}: {{file}} is missing.',
    badEntry: '{{file}}: entry {{name}} is not a dump record.',
    badRow: '{{file}} line {{line}}: {{count}} fields, the header has {{header}}.',
    config: 'msprobe config {{file}}: task: {{task}}; level: {{level}}.',
    notRecorded: 'not recorded',
    notRecordedIn: 'not recorded in {{file}}',
    dumpOnly:
      'One-sided dump (framework: {{framework}}; task: {{task}}): statistics only, nothing to compare against.',
  },
  cli: {
    baseline: 'precision: the baseline host (GPU, CPU, or the NPU host in fp32)',
    steps:
      'profiling: steps to profile (after one warm-up step); precision --script: calls of the model recorded',
    dtype: 'precision: the target dtype policy, fp32 | bf16 | fp16',
    mode: 'precision: statistics | tensor',
    import:
      'import an msprobe dump folder, dump.json or compare_result csv/xlsx as a precision run',
    session: 'add to this session',
    modules:
      'precision, tensor mode: keep the tensors of these modules only (named_modules() paths, * wildcards, comma-separated)',
    ops: 'precision: also record these aten ops (gelu, aten::softmax, …; comma-separated)',
    compare: 'compare two precision runs: how the first divergence moved from run A to run B',
    show: "show a precision run's modules, or one module's statistics on both sides (--module)",
    module: 'precision show: the module (named_modules() path) to show on both sides',
    noModule: 'Run {{run}} has no module {{module}}.',
  },
  runs: {
    later:
      'Run {{b}} against run {{a}}: the first divergence moved from {{from}} to {{to}}, later in execution order.',
    earlier:
      'Run {{b}} against run {{a}}: the first divergence moved from {{from}} to {{to}}, earlier in execution order.',
    same: 'Run {{b}} against run {{a}}: the first divergence is still {{from}}.',
    gone: 'Run {{b}} against run {{a}}: the divergence at {{from}} is gone; no module diverges.',
    appeared: 'Run {{b}} against run {{a}}: a first divergence appeared at {{to}} (none before).',
    none: 'Run {{b}} against run {{a}}: no module diverges in either.',
    changes:
      '{{fixed}} module(s) now agree better, {{regressed}} got worse; {{onlyA}} only in run {{a}}, {{onlyB}} only in run {{b}}.',
  },
  /** The dump modes' names (what --mode takes stays as it is). */
  modeName: { statistics: 'statistics', tensor: 'tensor' },
  report: {
    title: 'Precision',
    summary: '{{host}} against {{baseline}} · {{entry}} · {{dtype}} · {{mode}}',
    first: 'First divergence',
    none: 'No module diverges.',
    noneCompared: 'No module was compared: neither side recorded an output to align.',
    chart: 'Cosine (line) and error (bars) along execution order',
    module: 'Module',
    result: 'Result',
    source: 'Source',
    overTime: 'Over time',
    zero: 'errors of exactly 0 are drawn on the floor line marked 0',
  },
  ui: {
    run: 'Run precision comparison',
    target: 'Target (NPU) host',
    baseline: 'Baseline host',
    entry: 'Entry (FILE:FUNCTION)',
    dtype: 'Dtype policy',
    mode: 'Mode',
    backward: 'Gradients too',
    history: 'Runs',
    importPath: 'msprobe folder or file',
    importButton: 'Import',
    order: '#',
    cosine: 'Cosine',
    maxAbsErr: 'MaxAbsErr',
    maxRelErr: 'MaxRelErr',
    drift: 'Stat drift',
    firstDivergence: 'First divergence',
    noRuns: 'No precision runs in this session yet.',
    onlyDiverging: 'Only modules that are not pass',
    stats: 'max / min / mean / norm',
    script: 'or script (run as-is)',
    steps: 'Model calls recorded (script)',
    ops: 'Aten ops (comma-separated)',
    modules: 'Tensor-mode modules (patterns)',
    compareWith: 'Compare',
    compareHint: 'Tick two runs to compare them.',
    changed: 'Modules whose result changed',
    change: 'Change',
    fixed: 'fixed',
    regressed: 'regressed',
    ratios: 'One / Five Thousandths error ratio',
    meanRelErr: 'MeanRelErr',
    counts: 'pass / warning / error',
    drill: 'Both sides, as dumped',
    calls: 'Record',
    outputs: 'Outputs',
    device: 'Device',
    noDump:
      'This run keeps no raw dumps (imported from msprobe): the statistics above are all there is.',
    notInDump: "Not in this side's dump.",
  },
} as const;

export type PrecisionMessages = Widen<typeof en>;
