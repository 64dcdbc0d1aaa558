import type { Widen } from '../../../i18n/en';

/** Namespace `stage-ops`. */
export const en = {
  name: 'Operators',
  run: 'Capture operators',
  title: {
    trace: 'Operator capture',
    unsupported: 'Unsupported operators',
    fallback: 'Operators falling back to the CPU',
    change: 'Operators that need changes',
    dynamic: 'Dynamic shapes',
  },
  notEvaluated: 'Not evaluated: the capture did not finish.',
  modelFailed: 'The model failed: {{type}}: {{message}}',
  fixEntry:
    'Fix the entry (it must return (model, batches)) so it runs on this host, then run the stage again.',
  traced:
    '{{total}} distinct ops over {{batches}} batches: {{direct}} direct, {{needsChange}} need changes, {{cpuFallback}} fall back to the CPU, {{unsupported}} unsupported (torch_npu {{target}}, list {{opList}}).',
  none: 'None.',
  unsupported_one: '{{count}} op raises on the NPU.',
  unsupported_other: '{{count}} ops raise on the NPU.',
  unsupportedFix:
    'Replace them (sparse ops: use dense tensors or torch_npu counterparts) before moving on.',
  fallback_one:
    '{{count}} op has no NPU kernel in torch_npu {{target}}: it runs on the CPU, slowly.',
  fallback_other:
    '{{count}} ops have no NPU kernel in torch_npu {{target}}: they run on the CPU, slowly.',
  fallbackFix:
    'Check whether a newer torch_npu has them (compare versions on this page), or rewrite with supported ops.',
  change_one: '{{count}} op has known limits here.',
  change_other: '{{count}} ops have known limits here.',
  changeFix: "See each op's reason (dtype, support table).",
  dynamic_one: '{{count}} op sees different shapes across batches; inputs that vary: {{inputs}}.',
  dynamic_other: '{{count}} ops see different shapes across batches; inputs that vary: {{inputs}}.',
  variableInput: 'arg {{arg}} (dims {{dims}})',
  noneNamed: 'none named',
  static: 'Shapes are static across batches.',
  dynamicFix:
    'Every new shape compiles new NPU kernels. Pad or bucket variable lengths to a few fixed sizes (e.g. multiples of 64), and use torch.npu.set_compile_mode(jit_compile=False).',
  needsEntry:
    'The ops stage needs either an entry (FILE:FUNCTION returning (model, batches)) or a script.',
  noPython:
    '{{host}} has no python3 on the PATH of a non-interactive shell: the op capture needs Python with torch.',
  report: {
    title: 'Operator coverage',
    summary: '{{host}}: {{entry}}, classified for torch_npu {{version}} ({{list}}).',
    op: 'Operator',
    calls: 'Calls',
    class: 'Class',
    where: 'Where',
  },
  ui: {
    noHosts: 'This session has no hosts yet: add one with “Hosts…” at the top of the session.',
    entry: 'Entry on the host (FILE:FUNCTION)',
    entryHelp:
      'FUNCTION() must return (model, batches); each batch is a tuple of positional arguments. A path relative to the login directory works. Runs on any host with PyTorch — no NPU needed.',
    target: 'Classify for',
    hostVersion: 'the host’s torch_npu',
    backward: 'also run backward',
    against:
      'Classified for torch_npu {{version}} (op list {{list}}); traced with torch {{torch}}.',
    breakdown: 'Operators by class',
    class: {
      direct: 'direct',
      'needs-change': 'needs change',
      'cpu-fallback': 'CPU fallback',
      unsupported: 'unsupported',
    },
    compareWith: 'Compare with',
    compareSummary:
      'torch_npu {{version}}: {{improved}} ops better, {{regressed}} worse, {{fallbacks}} CPU fallbacks left.',
    variableInputs: 'Inputs whose shape varies across batches (argument [dims]: shapes): {{list}}',
    allClasses: 'All classes',
    dynamicOnly: 'dynamic shapes only',
    search: 'Search ops or modules',
    shown: '{{count}} of {{total}}',
    op: 'Operator',
    count: 'Calls',
    classCol: 'Class',
    shapes: 'Input shapes',
    where: 'Where',
    replacement: 'Suggested replacement',
    dynamic: 'dynamic',
    openInCode: 'open in the code review',
    dynamicHelp:
      'Different input shapes in different batches: each new shape compiles new kernels.',
  },
} as const;

export type OpsMessages = Widen<typeof en>;
