import type { CodeMessages } from './en';

/** 命名空间 `stage-code`。 */
export const zhCN: CodeMessages = {
  cudaSource: '{{file}} 是 CUDA C++ 源码，需要移植。',
  unreadable: '无法读取 {{file}}：{{error}}',
  syntaxErrors: '{{file}}：有 Python 语法错误，其中的发现可能不完整',
  tooCostly:
    '{{file}}：未分析：用时超过 {{seconds}} 秒后放弃（语法错误或生成的文本使其读取代价过高）；请修正其语法，或将其排除在扫描之外',
  analysisFailed: '{{file}}：未分析：分析该文件时出错（{{error}}）；请附上该文件报告此问题',
  name: '代码',
  files_one: '{{count}} 个文件',
  files_other: '{{count}} 个文件',
  findings_one: '{{files}}中有 {{count}} 处。',
  findings_other: '{{files}}中有 {{count}} 处。',
  advice_one: '{{files}}中有 {{count}} 处可选优化。',
  advice_other: '{{files}}中有 {{count}} 处可选优化。',
  // (Chinese has one plural form: worded to read right for one too)
  findingsAt_one: '{{files}}中有 {{count}} 处，见 {{at}}：{{what}}',
  findingsAt_other: '{{files}}中有 {{count}} 处，见 {{at}}：{{what}}',
  adviceAt_one: '{{files}}中有 {{count}} 处可选优化，见 {{at}}：{{what}}',
  adviceAt_other: '{{files}}中有 {{count}} 处可选优化，见 {{at}}：{{what}}',
  noPath: '代码阶段需要一个目录：请指定目录，或把项目的代码位置设为本机上的目录。',
  notFolder: '{{path}} 不是本机上的目录。',
  report: {
    title: '代码迁移',
    summary:
      '扫描 #{{scanId}}（{{root}}，{{mode}}）：{{files}}，{{lines}}；{{error}}，{{warning}}，{{info}}。工作量：{{level}}。',
    findings: '发现',
    file: '文件',
    rule: '规则',
    diffs: '已接受的修改',
    noDiffs: '尚未接受任何修改。',
    history: '各次扫描的发现数',
  },
};
