import type { ProfilingMessages } from './en';

/** 命名空间 `stage-profiling`。 */
export const zhCN: ProfilingMessages = {
  name: '性能分析',
  title: {
    run: '性能数据采集',
    aicpu: 'AI CPU 占比',
    free: '空闲时间占比',
    dynamic: '动态 Shape 算子',
    communication: '未被掩盖的通信',
    stepTime: '与 GPU 基线的单步耗时对比',
  },
  warn: {
    empty: '文件为空（0 字节），未读取任何内容。',
    csvError: 'CSV：{{error}}',
    ragged:
      '该行有 {{fields}} 个字段，表头有 {{header}} 个：已保留并按位置读取，缺口之后的值可能错位。',
    raggedMore: '另有 {{count}} 行的字段数与表头不一致。',
    unknownColumns: '无法识别的列（{{columns}} …）：未读取该文件。',
    badStep: '该 step 行缺少 Computing、Communication(Not Overlapped) 或 Free：已跳过。',
    notTrace: '不是 Chrome trace 格式（既不是事件数组，也不是 {"traceEvents": …}）。',
    truncated: '时间线文件不完整（{{error}}）：使用截断前已读到的 {{events}} 个事件。',
    tooLarge: '文件大小 {{mb}} MB，超过整体读取的上限：已跳过。',
    badJson: 'JSON 无效（{{error}}）。',
    nothing:
      '未找到性能数据（kernel_details.csv、op_summary_*.csv、step_trace_time.csv、trace_view.json、cluster_step_trace_time.csv 等）。',
    noRank: '某个 rank 目录既没有 profiler_info_<rank>.json，名称中也没有 rank 编号：rank 未知。',
    missingRanks: '读取的目录中缺少这些 rank：{{ranks}}。',
    standIn:
      '该主机上没有 torch_npu：本次以 CPU 上的 torch.profiler 代替（没有 kernel 和 step 拆解，只有单步耗时和算子耗时）。',
    hostFailed: '未能从 {{host}} 收集：{{error}}',
    missingFile: '该 rank 目录中没有 {{file}}。',
    nodeEmpty: '{{host}} 已连接但没有任何 rank 目录：其 rank 在结果中缺失。',
    torchrun:
      '{{host}}：用 torchrun 启动了 {{ranks}} 个 rank（--nproc_per_node {{n}}，后端 {{backend}}）；每个节点各自是一个 torchrun 进程组。',
    gloo: '{{host}} 上没有 NPU：其各 rank 在 CPU 上加入了 gloo 进程组。',
    rankNoResult:
      '{{host}} 上的 rank {{ranks}} 未返回结果就结束了（提前退出或崩溃）：其输出可能缺失或不完整。',
    gather: '已从 {{host}} 收集 {{files}} 个文件（{{mb}} MB），sha256 已校验。',
  },
  advice: {
    overallFree: {
      message: '空闲时间占单步耗时的 {{percent}}%，超过 {{threshold}}% 的阈值：设备在等待主机侧。',
      suggestion:
        '排查 kernel 之间的主机侧瓶颈：数据加载慢（num_workers、pin_memory）、同步操作（.item()、.cpu()、ASCEND_LAUNCH_BLOCKING）、大量小算子逐个下发（图模式、融合算子）。',
    },
    communicationUncovered: {
      message: '未与计算重叠的通信占单步耗时的 {{percent}}%（阈值 {{threshold}}%）。',
      suggestion:
        '让 HCCL 通信与计算重叠：DDP 设置 gradient_as_bucket_view=True 并增大 bucket，分片优化器使用 overlap_with_ddp，张量并行尽量限制在单机内；若下方有慢卡，先排查慢卡。',
    },
    aicpu: {
      message: '{{count}} 个 kernel 在 AI CPU 上执行（{{ops}}）：占单步耗时的 {{percent}}%。',
      suggestion:
        'AI CPU 算子慢且会打断 AI Core 流水。替换这些算子或其数据类型（如 int64 索引、float64、Cast 到 UINT64）为 AI Core 实现；动态 Shape 会把 Gather/Index/Mask 等算子推到 AI CPU 上——先把 Shape 静态化。',
    },
    dynamicShape: {
      message: '所有带 OP State 的算子都是动态的（{{count}} 个 kernel），没有一个以静态方式执行。',
      suggestion:
        '调用 torch_npu.npu.set_compile_mode(jit_compile=False)，并设置 torch_npu.npu.config.allow_internal_format = False；固定输入长度（padding 或分桶到少数几种尺寸），然后再尝试图模式。',
    },
    opDispatch: {
      message:
        'aclopCompileAndExecute 被调用了 {{count}} 次（阈值 {{threshold}}）：模型运行时仍在编译算子。',
      suggestion:
        '使用 torch_npu.npu.set_compile_mode(jit_compile=False) 以使用二进制 kernel，并保持 Shape 静态；图模式会整图下发。',
    },
    dataloader: {
      message: '有 {{count}} 次 dataloader 调用耗时 10 ms 以上（最长 {{maxMs}} ms）。',
      suggestion:
        '增大 num_workers（约为 CPU 核数的四分之一），设置 pin_memory=True 和 persistent_workers=True，把预处理移出训练步。',
    },
    slowRank: {
      message:
        '各 rank 在 {{dimensions}} 上存在差异：rank {{rank}} 在 {{dimension}} 上偏差达平均单步耗时的 {{percent}}%。',
      suggestion:
        '把慢卡与快卡对比（kernel 与主机）：负载不均、较慢的卡或主机，或某个流水线 stage 的层数更多。',
    },
    slowLink: {
      message:
        '各 rank 的 {{transport}} 带宽相差平均值的 {{percent}}%（平均 {{mean}} GB/s）；rank {{rank}} 最慢，为 {{min}} GB/s。',
      suggestion:
        '检查慢 rank 的链路（hccn_tool、RoCE/HCCS 健康状态、交换机端口）以及小包情况；HCCL_RDMA_TC/SL 和 HCCL_ALGO 的设置也会影响带宽。',
    },
    envVars: {
      message: '需要检查的环境变量：{{vars}}。',
      suggestion:
        '依据 msprof-analyze：ASCEND_GLOBAL_LOG_LEVEL=3，ACLNN_CACHE_LIMIT ≥ 10000，HOST_CACHE_CAPACITY > 0，PYTORCH_NPU_ALLOC_CONF 包含 expandable_segments:True，不设置 ASCEND_LAUNCH_BLOCKING；除非经过测量，HCCL_RDMA_TC、HCCL_RDMA_SL 和 HCCL_ALGO 保持默认。',
    },
    fusedOpsAttention: {
      message: 'Attention 由多个独立算子组成（{{ops}}），未见 FlashAttention kernel。',
      suggestion:
        '改用 {{api}}（input_layout 为 "BSH"；keep_prob 是保留概率，不是 dropout 概率）。',
    },
    fusedOpsRmsNorm: {
      message: 'RMSNorm 看起来由多个小算子拼成（{{ops}}）。',
      suggestion: '改用 {{api}} 融合 kernel。',
    },
    fusedOpsAdamw: {
      message: '优化器更新以逐元素算子执行（{{ops}}）。',
      suggestion: '改用 {{api}}（融合的优化器更新）。',
    },
  },
  check: {
    imported:
      '读取了 {{ranks}} 个 rank 目录（{{kind}}）：{{kernels}} 个 kernel，{{steps}} 行 step，{{advice}} 条建议，{{warnings}} 条警告。',
    nothing: '没有可度量的内容：未读取到任何性能数据。',
    aicpu: 'AI CPU 时间占单步耗时的 {{percent}}%（上限 {{limit}}%）。',
    noAicpu: '没有 kernel 在 AI CPU 上执行。',
    free: '空闲时间占单步耗时的 {{percent}}%（上限 {{limit}}%）。',
    dynamic: '没有算子以静态方式执行（{{count}} 个动态）。',
    static: '静态算子 {{static}} 个，动态算子 {{dynamic}} 个。',
    noState: 'kernel 表中没有 OP State 列（CANN 8.0 之前，或 Level0）。',
    communication: '未被掩盖的通信占单步耗时的 {{percent}}%（上限 {{limit}}%）。',
    stepTime:
      '平均单步 {{npuMs}} ms，GPU 基线为 {{gpuMs}} ms：{{ratio}} 倍（目标 ≤ {{target}} 倍）。',
    noBaseline: '没有 GPU 基线：请在基线主机上运行本阶段，或用 --baseline-run RUN 指定。',
    noSteps: '没有可对比的单步耗时。',
    ranOn: '在 {{host}} 上用 {{profiler}} 对 {{entry}} 采集了 {{steps}} 步。',
    failed: '被采集的运行失败：{{type}}：{{message}}',
    fixEntry:
      '修正入口使其能在该主机上运行（FUNCTION() 返回 (model, batches)），然后重新运行本阶段。',
  },
  cli: {
    out: {
      step: 'rank {{rank}} 第 {{step}} 步：计算 {{computing}} µs，未被掩盖的通信 {{communication}}，被掩盖的通信 {{overlapped}}，空闲 {{free}}，气泡 {{bubble}}',
      kernels: 'kernel：{{count}} 个，共 {{us}} µs',
      top: '耗时最长的 kernel：',
      warning: '警告：{{where}}：{{message}}',
      stored: '会话 {{session}}，运行 {{run}}',
      side: '{{side}}：{{source}}（{{kind}}）平均单步 {{us}} µs',
      ratio: '单步耗时 b/a：{{ratio}}',
      adviceDiff: '已消除的建议：{{fixed}}；新出现的建议：{{added}}',
    },
    profile: '导入性能数据并对比',
    import: '读取 torch_npu.profiler、msprof 或 msprof-analyze 集群分析的输出目录',
    gather: '从多台主机拷贝性能数据目录（SFTP，校验 sha256），合并读取',
    hosts: '主机名，用逗号分隔',
    remoteDir: '每台主机上的目录（相对家目录，或绝对路径）',
    compare: '对比两份性能数据（目录或已存储的运行 id）：b 相对 a',
    dir: '目录（*_ascend_pt、PROF_*、cluster_analysis_output 之一，或包含多个的上级目录）',
    session: '把导入结果存入该会话（不指定则新建）',
    store: '把导入结果存入会话（配合 --session 则存入该会话）',
    steps: '采集的步数（在一步预热之后）',
    level: 'torch_npu.profiler 级别：Level0、Level1 或 Level2',
    baseline: '用于对比单步耗时的 GPU 基线的已存储性能分析运行',
    targetRatio: '相对基线通过的单步耗时比（默认 1.2）',
    ranks: '作业的总 rank 数（world size）：应有 0 到 N-1 的每个 rank（含末尾的 rank）',
    ranksPerHost:
      '每台主机用 torchrun 启动的 rank 数（--nproc_per_node N；"npus"：每块 NPU 一个）；每个 rank 各自写输出',
    activities: 'torch_npu.profiler 采集的活动：cpu、npu 或 cpu,npu（默认两者）',
  },
  ui: {
    form: {
      title: '在主机上采集性能数据',
      hosts: '会话中的主机',
      noHosts: '该会话还没有主机：请先把主机加入会话。',
      entry: '入口 FILE:FUNCTION（返回模型与批数据）',
      script: '或一个脚本（自带循环：作为一个采集步）',
      steps: '步数（在一步预热之后）',
      level: '级别',
      activities: '采集活动',
      cpu: 'CPU',
      npu: 'NPU',
      ranks: '每台主机的 rank 数',
      perNpu: '每块 NPU 一个',
      ranksHelp:
        '多于一个 rank 时由 torchrun 启动（--nproc_per_node）；没有 NPU 的主机上它们在 CPU 上使用 gloo。',
      run: '运行性能采集',
    },
    import: {
      title: '导入性能数据',
      where: '来源',
      local: '本机上的目录',
      remote: '主机上的目录（经 SFTP 拷贝）',
      dir: '目录',
      hosts: '主机',
      worldSize: '总 rank 数（可选：要求每个 rank 都在）',
      submit: '导入',
    },
    compare: {
      notComparable_one: '运行 {{ids}} 没有保存的性能数据（导入或运行失败），无法参与比较。',
      notComparable_other: '运行 {{ids}} 没有保存的性能数据（导入或运行失败），无法参与比较。',
      open: '对比两次运行',
      close: '返回性能数据',
      a: '之前的运行，或 GPU 基线（a）',
      b: '之后的运行，或 NPU 运行（b）',
      needTwo: '对比需要两份已保存的性能数据：请再次运行本阶段或再导入一个目录。',
      same: '请选择两个不同的运行。',
      step: '平均单步耗时',
      ratio: '单步耗时 b / a：×{{ratio}}',
      category: '类别',
      name: '名称',
      delta: '差值 b − a（µs）',
      ratioCol: '比值 b ÷ a',
      taskTypes: '按任务类型的 kernel 耗时',
      ops: '按算子（名称可对应者，差值大者在前）',
      search: '搜索算子名称',
      onlyOne: '仅在其中一次运行中出现：{{count}} 个',
      fixed: 'b 中已消除的建议',
      added: 'b 中新出现的建议',
      kept: '两者都有的建议',
      none: '无',
    },
    noProfile:
      '运行 #{{id}} 的结果为“{{status}}”，没有保存性能数据：没有可显示的内容。错误信息见任务列表。',
    noRuns: '还没有性能数据：在主机上运行本阶段，或用上方的表单导入一个性能数据目录。',
    run: '性能数据',
    search: '搜索 kernel 和算子类型',
    timeline: {
      title: '单步时间线',
      loading: '正在从 trace_view.json 读取该步 …',
      step: '步',
      summary: '{{events}} 个事件，{{tracks}} 条轨道，跨度 {{span}}（{{file}}）',
      hint: '滚轮：缩放 · 拖动：平移 · 双击：显示整步',
      truncated: '该步的事件数超过时间线的上限：只显示前 {{events}} 个。',
      empty: '该步没有完整（ph 为 "X"）的事件。',
      duration: '耗时',
      at: '开始于',
    },
  },
  report: {
    compare: {
      title: '与本会话上一份性能数据对比',
      against: '{{b}} 对比 {{a}}',
      step: '平均单步耗时：{{bMs}} ms 对比 {{aMs}} ms（×{{ratio}}）',
      noStep: '其中一方没有单步耗时。',
      ops: '各算子差值最大者（µs）',
      advice: '已消除的建议：{{fixed}}；新出现的建议：{{added}}',
    },
    title: '性能分析',
    run: '{{source}}（{{kind}}），{{ranks}} 个 rank 目录',
    breakdown: '各 rank 的单步拆解（µs）',
    rank: 'Rank',
    step: '步',
    computing: '计算',
    communication: '通信（未重叠）',
    overlapped: '重叠',
    free: '空闲',
    bubble: '气泡',
    taskTypes: '按任务类型的 kernel 时间',
    top: '耗时最多的 kernel',
    kernel: 'Kernel',
    opType: '算子类型',
    taskType: '任务类型',
    time: '时间（µs）',
    count: '次数',
    share: '占比',
    advice: '建议',
    noAdvice: '没有触发任何规则。',
    warnings: '警告',
    severity: { high: '高', medium: '中', low: '低' },
  },
  needsEntry: '性能分析阶段需要一个入口（返回 (model, batches) 的 FILE:FUNCTION）或一个脚本。',
};
