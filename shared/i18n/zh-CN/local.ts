import type { Messages } from '../en';

export const local: Messages['local'] = {
  button: '本机',
  hint: '无需 SSH，直接在本机执行盘点和各阶段：适用于直接在 NPU 服务器或其上的容器中工作。',
  address: '本机，无需 SSH',
};
