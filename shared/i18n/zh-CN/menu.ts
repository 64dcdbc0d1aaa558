import type { Messages } from '../en';

export const menu: Messages['menu'] = {
  edit: '编辑',
  view: '视图',
  help: '帮助',
  docs: '昇腾文档',
};
