import type { Messages } from '../en';

export const errors: Messages['errors'] = {
  ssh: {
    dns: '无法解析主机名 {{host}}。请检查拼写、ssh 配置中的 HostName，或 DNS/VPN。',
    refused: '{{where}} 拒绝了连接。请确认该主机上 sshd 正在运行，以及端口 {{port}} 是否正确。',
    unreachable: '{{where}} 没有响应（{{errno}}）。请检查地址、防火墙，或是否需要跳板机。',
    reset:
      '{{where}} 在握手期间重置了连接。服务器可能限制了连接数（MaxStartups）或屏蔽了你的地址。',
    handshakeTimeout: '{{where}} 未能及时完成 SSH 握手。请检查地址、防火墙，或是否需要跳板机。',
    auth: '{{username}}@{{where}} 拒绝了所有尝试过的登录方式：{{methods}}。请检查用户名、公钥是否已加入该主机的 ~/.ssh/authorized_keys，或提供密码。',
    authNone:
      '{{username}}@{{where}} 需要登录方式，但没有可用的方式（无 agent、无密钥、无密码）。请提供密钥文件或密码。',
    handshake: '与 {{where}} 的 SSH 握手失败（{{cause}}）。',
    other: '连接 {{where}} 失败（{{cause}}）。',
  },
  VALIDATION: '输入无效：{{message}}',
  UNKNOWN_METHOD: '引擎不认识这个请求：{{message}}',
  BAD_MESSAGE: '无法读取请求：{{message}}',
  PAYLOAD_TOO_LARGE: '请求过大：{{message}}',
  NOT_FOUND: '未找到：{{message}}',
  CANCELLED: '已取消。',
  CONFLICT: '冲突：{{message}}',
  UNAUTHORIZED: '未授权。请打开 `amw serve` 输出的地址。',
  DB_TOO_NEW:
    '数据库 {{dbPath}} 的结构版本为 {{dbVersion}}，而本版工作台最高只支持 {{appVersion}}。请升级工作台，或用 --db 指定其他数据库。',
  DB_MIGRATION_EDITED: '迁移脚本在应用到 {{dbPath}} 之后被修改过：{{message}}',
  DB_CORRUPT:
    '数据库文件 {{dbPath}} 已损坏或不是工作台数据库。运行 `amw db check` 查看损坏情况；然后从旁边的 backups 文件夹恢复最新的备份（由 `amw db backup` 生成），或移走该文件重新开始。',
  DB_DISK_FULL: '磁盘已满：{{message}}。没有再写入任何内容；请释放空间后重试。',
  DB_UNWRITABLE: '无法写入数据库文件 {{dbPath}}。请检查权限，或用 --db 或 AMW_HOME 指定其他位置。',
  DB_BUSY: '数据库文件 {{dbPath}} 被其他进程锁定。请关闭后重试。',
  HOST_KEY_MISMATCH: '主机密钥已变化：{{message}}',
  HOST_KEY_UNKNOWN: '未知的主机密钥：{{message}}',
  AUTH_FAILED: '认证失败：{{message}}',
  CONNECT_TIMEOUT: '连接超时：{{message}}',
  CONNECTION_REFUSED: '连接被拒绝：{{message}}',
  DNS: '找不到主机名：{{message}}',
  DISCONNECTED: '连接中断：{{message}}',
  JUMP_FAILED: '跳板机连接失败：{{message}}',
  KEY_UNREADABLE: '私钥无法使用：{{message}}',
  COMMAND_TIMEOUT: '远程命令超时：{{message}}',
  SSH_CONFIG: '无法读取 SSH 配置：{{message}}',
  PROBE_FAILED: '主机上的探测脚本没有给出可读的结果：{{message}}',
  INTERNAL: '意外错误：{{message}}',
};
