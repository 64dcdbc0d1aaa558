import type { Widen } from '../../../i18n/en';

/** Namespace `stage-profiling`. */
export const en = {
  name: 'Profiling',
  title: {
    run: 'Profile capture',
    aicpu: 'AI CPU share',
    free: 'Free (idle) share',
    dynamic: 'Dynamic-shape operators',
    communication: 'Uncovered communication',
    stepTime: 'Step time against the GPU baseline',
  },
  warn: {
    empty: 'The file is empty (0 bytes): nothing read.',
    csvError: 'CSV: {{error}}',
    ragged:
      'This row has {{fields}} fields where the header has {{header}}: kept, read by position; values after the gap may be shifted.',
    raggedMore: '{{count}} more rows with a different number of fields than the header.',
    unknownColumns: 'Unknown column set ({{columns}} …): the file was not read.',
    badStep: 'A step row without Computing, Communication(Not Overlapped) or Free: skipped.',
    notTrace: 'Not a Chrome trace (neither an event array nor {"traceEvents": …}).',
    truncated:
      'The timeline stops before its end ({{error}}): the {{events}} events read up to here are used.',
    tooLarge: 'The file is {{mb}} MB, more than this reader takes whole: skipped.',
    badJson: 'Not valid JSON ({{error}}).',
    nothing:
      'No profiler output found (kernel_details.csv, op_summary_*.csv, step_trace_time.csv, trace_view.json, cluster_step_trace_time.csv …).',
    noRank:
      'A rank folder without profiler_info_<rank>.json or a rank in its name: its rank is unknown.',
    missingRanks: 'Ranks missing from the folders read: {{ranks}}.',
    standIn:
      'torch_npu is not on this host: the run used torch.profiler on the CPU as a stand-in (no kernels, no step breakdown; step times and op times only).',
    hostFailed: 'Nothing gathered from {{host}}: {{error}}',
    missingFile: 'This rank folder has no {{file}}.',
    nodeEmpty: '{{host}} answered but gave no rank folder: its ranks are missing from the profile.',
    torchrun:
      '{{host}}: {{ranks}} ranks launched with torchrun (--nproc_per_node {{n}}, backend {{backend}}); each node is its own torchrun world.',
    gloo: 'No NPU on {{host}}: its ranks joined a gloo process group on the CPU.',
    rankNoResult:
      'Ranks {{ranks}} on {{host}} ended without a result (exited early or crashed): their output may be missing or partial.',
    gather: 'Gathered {{files}} files ({{mb}} MB) from {{host}}; sha256 checked.',
  },
  advice: {
    overallFree: {
      message:
        'Free (idle) time is {{percent}}% of the step time, above the {{threshold}}% threshold: the device waits for the host.',
      suggestion:
        'Look for host-bound work between kernels: slow data loading (num_workers, pin_memory), synchronisations (.item(), .cpu(), ASCEND_LAUNCH_BLOCKING), many small operators dispatched one by one (graph mode, fused operators).',
    },
    communicationUncovered: {
      message:
        'Communication not overlapped with computation is {{percent}}% of the step time (threshold {{threshold}}%).',
      suggestion:
        'Overlap HCCL with computation: DDP gradient_as_bucket_view=True and larger buckets, overlap_with_ddp for a sharded optimizer, and keep tensor parallelism inside one node; check the slow rank below if there is one.',
    },
    aicpu: {
      message: '{{count}} kernels ran on the AI CPU ({{ops}}): {{percent}}% of the step time.',
      suggestion:
        'AI CPU operators are slow and break the AI Core pipeline. Replace them or their dtypes (e.g. int64 indices, float64, Cast to UINT64) with AI Core ones; dynamic shapes push Gather/Index/Mask ops to the AI CPU — make shapes static first.',
    },
    dynamicShape: {
      message:
        'Every operator with an OP State is dynamic ({{count}} kernels): none ran as static.',
      suggestion:
        'Call torch_npu.npu.set_compile_mode(jit_compile=False) and torch_npu.npu.config.allow_internal_format = False; fix input lengths (pad or bucket to a few sizes), then try graph mode.',
    },
    opDispatch: {
      message:
        'aclopCompileAndExecute was called {{count}} times (threshold {{threshold}}): operators are compiled while the model runs.',
      suggestion:
        'Use torch_npu.npu.set_compile_mode(jit_compile=False) so binary kernels are used, and keep shapes static; graph mode dispatches the whole graph at once.',
    },
    dataloader: {
      message: '{{count}} dataloader calls took 10 ms or more (longest {{maxMs}} ms).',
      suggestion:
        'Raise num_workers (about a quarter of the CPU cores), set pin_memory=True and persistent_workers=True, and move preprocessing out of the step.',
    },
    slowRank: {
      message:
        'Ranks differ in {{dimensions}}: rank {{rank}} is off by {{percent}}% of the mean step time in {{dimension}}.',
      suggestion:
        'Compare the slow rank with a fast one (its kernels and host): an uneven load, a slower card or host, or a pipeline stage with more layers.',
    },
    slowLink: {
      message:
        '{{transport}} bandwidth differs between ranks by {{percent}}% of the mean ({{mean}} GB/s); rank {{rank}} is slowest at {{min}} GB/s.',
      suggestion:
        'Check the slow rank’s links (hccn_tool, RoCE/HCCS health, the switch port) and small packets; HCCL_RDMA_TC/SL and HCCL_ALGO settings can change it.',
    },
    envVars: {
      message: 'Environment variables to review: {{vars}}.',
      suggestion:
        'Per msprof-analyze: ASCEND_GLOBAL_LOG_LEVEL=3, ACLNN_CACHE_LIMIT ≥ 10000, HOST_CACHE_CAPACITY > 0, PYTORCH_NPU_ALLOC_CONF with expandable_segments:True, ASCEND_LAUNCH_BLOCKING unset; leave HCCL_RDMA_TC, HCCL_RDMA_SL and HCCL_ALGO at their defaults unless measured.',
    },
    fusedOpsAttention: {
      message:
        'Attention runs as separate operators ({{ops}}) and no FlashAttention kernel is seen.',
      suggestion:
        'Use {{api}} (input_layout "BSH"; keep_prob is the keep probability, not the dropout rate).',
    },
    fusedOpsRmsNorm: {
      message: 'RMSNorm looks composed of small operators ({{ops}}).',
      suggestion: 'Use {{api}} for the fused kernel.',
    },
    fusedOpsAdamw: {
      message: 'The optimizer step runs as element-wise operators ({{ops}}).',
      suggestion: 'Use {{api}} (a fused optimizer step).',
    },
  },
  check: {
    imported:
      '{{ranks}} rank folder(s) read ({{kind}}): {{kernels}} kernels, {{steps}} step rows, {{advice}} advice, {{warnings}} warnings.',
    nothing: 'Nothing to measure: no profiler output was read.',
    aicpu: 'AI CPU time is {{percent}}% of the step time (limit {{limit}}%).',
    noAicpu: 'No kernel ran on the AI CPU.',
    free: 'Free time is {{percent}}% of the step time (limit {{limit}}%).',
    dynamic: 'No operator ran as static ({{count}} dynamic).',
    static: '{{static}} static and {{dynamic}} dynamic operators.',
    noState: 'The kernel table has no OP State column (CANN before 8.0, or Level0).',
    communication: 'Uncovered communication is {{percent}}% of the step time (limit {{limit}}%).',
    stepTime:
      'Mean step {{npuMs}} ms against {{gpuMs}} ms on the GPU baseline: {{ratio}}× (target ≤ {{target}}×).',
    noBaseline: 'No GPU baseline: run the stage on the baseline host, or give --baseline-run RUN.',
    noSteps: 'No step times to compare.',
    ranOn: 'Profiled {{steps}} steps of {{entry}} on {{host}} with {{profiler}}.',
    failed: 'The profiled run failed: {{type}}: {{message}}',
    fixEntry:
      'Fix the entry so it runs on this host (FUNCTION() returns (model, batches)), then run the stage again.',
  },
  cli: {
    out: {
      step: 'rank {{rank}} step {{step}}: computing {{computing}} µs, communication not overlapped {{communication}}, overlapped {{overlapped}}, free {{free}}, bubble {{bubble}}',
      kernels: 'kernels: {{count}}, {{us}} µs',
      top: 'top kernels:',
      warning: 'warning: {{where}}: {{message}}',
      stored: 'session {{session}}, run {{run}}',
      side: '{{side}}: {{source}} ({{kind}}) mean step {{us}} µs',
      ratio: 'step time b/a: {{ratio}}',
      adviceDiff: 'advice fixed: {{fixed}}; new: {{added}}',
    },
    profile: 'Import profiler output and compare profiles',
    import: 'Read a folder of torch_npu.profiler, msprof or msprof-analyze cluster output',
    gather:
      'Copy a folder of profiler output off several hosts (SFTP, sha256 checked) and read it as one',
    hosts: 'host names, comma-separated',
    remoteDir: 'the folder on each host (relative to the home directory, or absolute)',
    compare: 'Compare two profiles (folders or stored run ids): b against a',
    dir: 'the folder (any of *_ascend_pt, PROF_*, cluster_analysis_output, or a parent of several)',
    session: 'store the import in this session (a new one when absent)',
    store: 'store the import in a session (with --session, that one)',
    steps: 'steps to profile (after one warm-up step)',
    level: 'torch_npu.profiler level: Level0, Level1 or Level2',
    baseline: 'a stored profiling run of the GPU baseline to compare step times with',
    targetRatio: 'the step-time ratio against the baseline that passes (default 1.2)',
    ranks: "the job's world size: every rank from 0 to N-1 is expected (the last ones too)",
    ranksPerHost:
      'ranks launched on each host with torchrun (--nproc_per_node N; "npus": one per NPU); every rank writes its own output',
    activities: 'what torch_npu.profiler records: cpu, npu or cpu,npu (default both)',
  },
  ui: {
    form: {
      title: 'Profile on hosts',
      hosts: 'Hosts of the session',
      noHosts: 'The session has no hosts: add one to the session first.',
      entry: 'Entry FILE:FUNCTION (returns the model and batches)',
      script: 'or a script (its own loop: one profiled step)',
      steps: 'Steps (after one warm-up step)',
      level: 'Level',
      activities: 'Activities',
      cpu: 'CPU',
      npu: 'NPU',
      ranks: 'Ranks per host',
      perNpu: 'one per NPU of the host',
      ranksHelp:
        'More than one rank: torchrun starts them (--nproc_per_node); on a host without an NPU they use gloo on the CPU.',
      run: 'Run the profiler',
    },
    import: {
      title: 'Import profiler output',
      where: 'From',
      local: 'a folder on this machine',
      remote: 'a folder on hosts (copied over SFTP)',
      dir: 'Folder',
      hosts: 'Hosts',
      worldSize: 'World size (optional: every rank expected)',
      submit: 'Import',
    },
    compare: {
      notComparable_one:
        'Run {{ids}} ended without a stored profile (an import or run that failed), so it cannot be compared.',
      notComparable_other:
        'Runs {{ids}} ended without a stored profile (imports or runs that failed), so they cannot be compared.',
      open: 'Compare two runs',
      close: 'Back to the profile',
      a: 'Before, or the GPU baseline (a)',
      b: 'After, or the NPU run (b)',
      needTwo: 'Comparing needs two stored profiles: run the stage again or import another folder.',
      same: 'Pick two different runs.',
      step: 'Mean step time',
      ratio: 'b / a step time: ×{{ratio}}',
      category: 'Category',
      name: 'Name',
      delta: 'Difference b − a (µs)',
      ratioCol: 'b ÷ a',
      taskTypes: 'Kernel time per task type',
      ops: 'Per op, where the names map (largest difference first)',
      search: 'Search op names',
      onlyOne: 'Only in one of the two runs: {{count}}',
      fixed: 'Advice gone in b',
      added: 'New advice in b',
      kept: 'Advice in both',
      none: 'none',
    },
    noProfile:
      'Run #{{id}} ended as “{{status}}” and stored no profile: there is nothing to show. The Jobs list has its error.',
    noRuns:
      'No profile yet: run the stage on hosts, or import a profiler folder with the form above.',
    run: 'Profile',
    search: 'Search kernels and op types',
    timeline: {
      title: 'Timeline of one step',
      loading: 'Reading the step from trace_view.json …',
      step: 'Step',
      summary: '{{events}} events on {{tracks}} track(s) over {{span}} ({{file}})',
      hint: 'Wheel: zoom · drag: pan · double-click: the whole step',
      truncated:
        'The step has more events than the timeline holds: the first {{events}} are shown.',
      empty: 'No complete (ph "X") events in this step.',
      duration: 'Duration',
      at: 'Starts at',
    },
  },
  report: {
    compare: {
      title: 'Against the previous profile of the session',
      against: '{{b}} against {{a}}',
      step: 'Mean step time: {{bMs}} ms against {{aMs}} ms (×{{ratio}})',
      noStep: 'No step time on one of the two sides.',
      ops: 'Largest differences per op (µs)',
      advice: 'Advice gone: {{fixed}}; new: {{added}}',
    },
    title: 'Profiling',
    run: '{{source}} ({{kind}}), {{ranks}} rank folder(s)',
    breakdown: 'Step breakdown per rank (µs)',
    rank: 'Rank',
    step: 'Step',
    computing: 'Computing',
    communication: 'Communication (not overlapped)',
    overlapped: 'Overlapped',
    free: 'Free',
    bubble: 'Bubble',
    taskTypes: 'Kernel time by task type',
    top: 'Top kernels',
    kernel: 'Kernel',
    opType: 'OP type',
    taskType: 'Task type',
    time: 'Time (µs)',
    count: 'Count',
    share: 'Share',
    advice: 'Advice',
    noAdvice: 'No rule fired.',
    warnings: 'Warnings',
    severity: { high: 'High', medium: 'Medium', low: 'Low' },
  },
  needsEntry:
    'The profiling stage needs either an entry (FILE:FUNCTION returning (model, batches)) or a script.',
} as const;

export type ProfilingMessages = Widen<typeof en>;
