import type { Messages } from '../en';

export const ops: Messages['ops'] = {
  noHosts: '本会话还没有主机：请用会话顶部的“主机…”添加。',
  entry: '主机上的入口（FILE:FUNCTION）',
  entryHelp:
    'FUNCTION() 必须返回 (model, batches)；每个 batch 是位置参数组成的元组。可使用相对于登录目录的路径。任何装有 PyTorch 的主机都能运行，无需 NPU。',
  target: '按此版本分类',
  hostVersion: '主机上的 torch_npu',
  backward: '同时执行反向传播',
  against: '按 torch_npu {{version}}（算子表 {{list}}）分类；采集时的 torch 版本为 {{torch}}。',
  breakdown: '按类别统计的算子',
  class: {
    direct: '直接支持',
    'needs-change': '需修改',
    'cpu-fallback': '回退 CPU',
    unsupported: '不支持',
  },
  compareWith: '与其比较',
  compareSummary:
    'torch_npu {{version}}：{{improved}} 种算子变好，{{regressed}} 种变差，仍有 {{fallbacks}} 种回退 CPU。',
  variableInputs: '各批次形状变化的输入（参数 [维度]：形状）：{{list}}',
  allClasses: '全部类别',
  dynamicOnly: '只看动态形状',
  search: '搜索算子或模块',
  shown: '{{count}} / {{total}}',
  op: '算子',
  count: '调用次数',
  classCol: '类别',
  shapes: '输入形状',
  where: '位置',
  replacement: '建议替换',
  dynamic: '动态',
  openInCode: '在代码审阅中打开',
  dynamicHelp: '不同批次的输入形状不同：每个新形状都会编译新的算子。',
};
