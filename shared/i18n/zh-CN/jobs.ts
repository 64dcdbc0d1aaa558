import type { Messages } from '../en';

export const jobs: Messages['jobs'] = {
  title: '任务',
  open: '任务',
  running_one: '{{count}} 个运行中',
  running_other: '{{count}} 个运行中',
  empty: '暂无任务。备份、清单采集、阶段运行等耗时工作会在这里显示进度。',
  cancel: '取消',
  result: '结果',
  status: {
    queued: '排队中',
    running: '运行中',
    succeeded: '已完成',
    failed: '失败',
    cancelled: '已取消',
    interrupted: '已中断',
  },
  kind: {
    inventory: '主机清单采集',
    fleet_inventory: '集群清单采集',
    maintenance_backup: '数据库备份',
    code_scan: '代码扫描',
    maintenance_check: '数据库检查',
  },
  step: {
    connecting: '正在连接 {{host}}',
    probing: '正在 {{host}} 上运行清单探测',
    stored: '{{host}} 的清单已保存',
    fleetHost: '已完成 {{done}} / {{total}} 台主机（{{host}}）',
    evaluating: '正在评估 {{host}} 的检查项',
    copyPages: '已复制 {{done}} / {{total}} 页',
    integrity: '正在检查数据库完整性',
    foreignKeys: '正在检查表之间的引用',
    scanning: '已扫描 {{done}} / {{total}} 个文件',
    scanStored: '扫描结果已保存',
    artifacts: '已校验 {{done}} / {{total}} 个证据文件',
  },
};
