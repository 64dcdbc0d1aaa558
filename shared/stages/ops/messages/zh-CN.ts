import type { OpsMessages } from './en';

/** 命名空间 `stage-ops`。 */
export const zhCN: OpsMessages = {
  name: '算子',
  run: '采集算子',
  title: {
    trace: '算子采集',
    unsupported: '不支持的算子',
    fallback: '回退到 CPU 的算子',
    change: '需要修改的算子',
    dynamic: '动态形状',
  },
  notEvaluated: '未评估：采集没有完成。',
  modelFailed: '模型运行失败：{{type}}: {{message}}',
  fixEntry: '修正入口（需返回 (model, batches)），使其能在该主机上运行，然后重新运行本阶段。',
  traced:
    '{{batches}} 个批次共 {{total}} 种算子：直接支持 {{direct}}，需修改 {{needsChange}}，回退 CPU {{cpuFallback}}，不支持 {{unsupported}}（torch_npu {{target}}，算子表 {{opList}}）。',
  none: '没有。',
  unsupported_one: '{{count}} 种算子在 NPU 上会报错。',
  unsupported_other: '{{count}} 种算子在 NPU 上会报错。',
  unsupportedFix: '先替换这些算子（稀疏算子：改用稠密张量或 torch_npu 对应算子）。',
  fallback_one: '{{count}} 种算子在 torch_npu {{target}} 中没有 NPU 实现：会在 CPU 上缓慢运行。',
  fallback_other: '{{count}} 种算子在 torch_npu {{target}} 中没有 NPU 实现：会在 CPU 上缓慢运行。',
  fallbackFix: '查看更新的 torch_npu 是否支持（在本页比较版本），或用受支持的算子改写。',
  change_one: '{{count}} 种算子有已知限制。',
  change_other: '{{count}} 种算子有已知限制。',
  changeFix: '请查看每个算子的原因（数据类型、支持表）。',
  dynamic_one: '{{count}} 种算子在不同批次看到不同形状；变化的输入：{{inputs}}。',
  dynamic_other: '{{count}} 种算子在不同批次看到不同形状；变化的输入：{{inputs}}。',
  variableInput: '参数 {{arg}}（维度 {{dims}}）',
  noneNamed: '未识别',
  static: '各批次形状一致。',
  dynamicFix:
    '每个新形状都会编译新的 NPU 算子。把变长输入填充或分桶到少数固定长度（如 64 的倍数），并设置 torch.npu.set_compile_mode(jit_compile=False)。',
  needsEntry: '算子阶段需要入口（FILE:FUNCTION，返回 (model, batches)）或脚本之一。',
  noPython: '{{host}} 在非交互式 shell 的 PATH 中没有 python3：算子采集需要带 torch 的 Python。',
};
