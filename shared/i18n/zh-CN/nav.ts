import type { Messages } from '../en';

export const nav: Messages['nav'] = {
  hosts: '主机',
  sessions: '迁移会话',
  code: '代码',
  reports: '报告',
  doctor: '错误诊断',
  settings: '设置',
  main: '主导航',
};
