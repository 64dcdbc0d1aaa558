import type { Messages } from '../en';

export const app: Messages['app'] = {
  name: '昇腾迁移工作台',
  shortName: 'AMW',
  tagline: '把 PyTorch 从 CUDA GPU 迁移到昇腾 NPU，每一步都有证据。',
};
