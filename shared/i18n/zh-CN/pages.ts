import type { Messages } from '../en';

export const pages: Messages['pages'] = {
  hosts: {
    title: '昇腾主机',
    lead: '接入要迁移到的机器。工作台通过 SSH 读取 NPU、健康状态以及 CANN、驱动、torch、torch_npu 版本，并标出同一集群内机器之间的差异。',
    step1: '从 ~/.ssh/config 导入主机（支持 Include 与 ProxyJump），或手动添加。',
    step2: '按 SHA256 指纹确认每台主机的密钥；密钥变化会被拒绝。',
    step3: '采集清单：芯片、HBM、健康状态和版本矩阵，保存为快照。',
  },
  sessions: {
    title: '迁移会话',
    lead: '一次会话带一个项目依次走过各阶段——环境、代码、算子覆盖、精度、分布式（HCCL）、性能分析——每项都有证据、门禁和豁免，多次运行的进展一目了然。',
    step1: '创建项目：代码位置、目标主机，以及用于对比的 GPU 基线。',
    step2: '先运行环境阶段：版本矩阵往往比代码更早卡住迁移。',
    step3: '逐项修复或填写理由豁免失败的检查，重跑直到阶段通过。',
  },
  code: {
    title: '代码迁移',
    lead: '扫描 PyTorch 代码库中只能在 CUDA 上运行的写法——设备、AMP、NCCL、融合算子、CUDA 扩展——并以 diff 形式逐处审阅建议的 NPU 改动后再应用。',
    step1: '打开本地项目目录；这一步不需要 NPU 或主机。',
    step2: '按文件查看发现的问题，逐个接受或拒绝修改块。',
    step3: '导出补丁，或应用已接受的修改（会先备份）。',
  },
  reports: {
    title: '报告',
    lead: '把一次会话导出为团队可审阅的完整证据链：HTML、Markdown、PDF、JSON、SARIF 或 JUnit。评审者可导入 JSON、评论并签核。',
    step1: '至少完成会话中的一个阶段。',
    step2: '选择格式和报告语言；密钥等敏感信息始终脱敏。',
    step3: '分享文件；同事无需主机权限即可导入审阅。',
  },
  settings: {
    title: '设置',
    language: '语言',
    theme: '主题',
    themeLight: '浅色',
    themeDark: '深色',
    themeSystem: '跟随系统',
    storage: '数据',
    dataDir: '数据目录',
    dbPath: '数据库',
    schema: '结构版本',
    version: '版本',
    maintenance: '数据库维护',
    maintenanceLead: '两者都以任务方式运行：可在任务抽屉中查看进度并取消。',
    backup: '备份数据库',
    check: '检查数据库与证据文件',
  },
};
