import type { Widen } from '../../../i18n/en';
import type { collectiveEn } from './collective.en';

/** 集合通信启动器的文本（命名空间 `stage-distributed` 下的 `collective.`）。 */
export const collectiveZhCN: Widen<typeof collectiveEn> = {
  notBuilt: '此版本尚未包含集合通信启动器：未运行集合通信。',
};
