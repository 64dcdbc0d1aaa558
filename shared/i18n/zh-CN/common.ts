import type { Messages } from '../en';

export const common: Messages['common'] = {
  loading: '加载中…',
  entryFormat:
    'FILE:FUNCTION——主机上的 Python 文件及其中返回 (model, batches) 的函数，例如 train/model.py:build',
  /** Where a stage ran when it ran on this machine (stored as `(local)`). */
  thisMachine: '本机',
  back: '返回',
  cancel: '取消',
  close: '关闭',
  edit: '编辑',
  retry: '重试',
  /** How engine messages join sentences and lists in this language. */
  join: { sentences: '', list: '、' },
  colon: '：',
  paren: '（{{text}}）',
  fieldRequired: '请填写此项。',
  fieldFormat: '格式不正确。',
  more: '…… 另有 {{count}} 项',
  notYet: '本版本尚未提供',
  howToStart: '如何开始',
  cli: '命令行',
  connectionLost: '与工作台引擎的连接已断开，正在重连…',
  reconnected: '已重新连接。',
};
