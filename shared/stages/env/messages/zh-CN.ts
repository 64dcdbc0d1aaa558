import type { EnvMessages } from './en';

/** 命名空间 `stage-env`。 */
export const zhCN: EnvMessages = {
  name: '环境',
};
