import type { CodeMessages } from './en';

/** 命名空间 `stage-code`。 */
export const zhCN: CodeMessages = {
  cudaSource: '{{file}} 是 CUDA C++ 源码，需要移植。',
  name: '代码',
  files_one: '{{count}} 个文件',
  files_other: '{{count}} 个文件',
  findings_one: '{{files}}中有 {{count}} 处。',
  findings_other: '{{files}}中有 {{count}} 处。',
  noPath: '代码阶段需要一个目录：请指定目录，或把项目的代码位置设为本机上的目录。',
  notFolder: '{{path}} 不是本机上的目录。',
};
