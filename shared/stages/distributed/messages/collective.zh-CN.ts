import type { Widen } from '../../../i18n/en';
import type { collectiveEn } from './collective.en';

/** 集合通信启动器的文本（命名空间 `stage-distributed` 下的 `collective.`）。 */
export const collectiveZhCN: Widen<typeof collectiveEn> = {
  notBuilt: '此版本尚未包含集合通信启动器：未运行集合通信。',
  progress: {
    detecting: '正在查看 {{hosts}} 台主机可用的启动方式…',
    launching: '正在 {{hosts}} 台主机上启动 {{launcher}}（共 {{world}} 个 rank）…',
    hcclTest: '正在通过 mpirun 运行 hccl_test all_reduce…',
    stopping: '正在停止每台主机上的所有 rank…',
    gathering: '正在收集各 rank 的日志…',
    done: '集合通信已结束。',
  },
  note: {
    gloo: '并非每台主机都有 NPU 和 torch_npu：all_reduce 在 CPU 上以 gloo 后端运行。它检验的是启动、rendezvous 和主机网络，而不是 HCCL 或 NPU 链路。',
    hccl: 'all_reduce 在 NPU 上以 hccl 后端（torch_npu）运行，每个 NPU 一个 rank。',
    launcher: '启动方式 {{launcher}}：{{detail}}',
    torchrunDetail:
      'torchrun，c10d rendezvous 位于 {{endpoint}}，{{nodes}} 个节点 × 每节点 {{perNode}} 个 rank。',
    srunDetail: '这些主机属于一个 Slurm 分区：由 srun 在每个节点上启动一次 torchrun。',
    msrunDetail: 'MindSpore 项目（可导入 mindspore，不可导入 torch）：由 msrun 启动 worker。',
    mpirunDetail: '通过 mpirun 运行 hccl_test 的 all_reduce_test（{{mpi}}）。',
    hostnameMaster:
      '{{host}} 上的 torch {{version}} 以 rank 0 所在主机的主机名把 rank 0 地址告知其他 rank：该主机名必须解析为每台主机都能访问的地址。',
    hcclTest:
      '带宽由 hccl_test（HCCL 自带测试）通过 mpirun 测得；表中为其 alg_bandwidth，总线带宽 = alg × 2(n−1)/n。',
    hcclTestFailed: '通过 mpirun 运行的 hccl_test 没有给出结果：{{error}}',
    busbw:
      '对 all_reduce，总线带宽 = 算法带宽 × 2(n−1)/n（n = {{world}} 个 rank），与 nccl-tests 和 hccl_test 的定义一致。',
    leftover: '发送 SIGTERM 和 SIGKILL 之后，{{host}} 上仍有本次运行的 {{count}} 个进程存活。',
    killed: '已停止每台主机上的所有 rank（按进程组和运行标记），没有残留进程。',
    badRow: 'hccl_test 输出第 {{line}} 行第 {{column}} 列：“{{text}}”不是结果行，已跳过。',
    rowFailed: 'hccl_test 输出第 {{line}} 行：{{bytes}} 字节的 check_result 为“{{result}}”。',
  },
  error: {
    deadline: '集合通信未在 {{seconds}} 秒内结束：已停止所有 rank。',
    cancelled: '集合通信已取消：已停止所有 rank。',
    noHosts: '没有为集合通信指定主机。',
    unreachable: '无法连接 {{host}}：{{error}}',
    noPython: '{{host}} 在非交互式登录的 PATH 中没有 python3。',
    noTorch: '{{host}} 没有 PyTorch（python3 找不到 torch），无法在该主机上启动 torchrun。',
    noLauncher:
      '没有一种启动方式能在所有主机上使用：torchrun 需要 torch，msrun 需要 mindspore，mpirun 需要 NPU 主机上的 hccl_test。',
    launcherMissing: '指定了 {{launcher}}，但 {{host}} 上没有它。',
    noAddress: '{{host}} 上没有地址为 {{address}} 的网卡，而其他主机要通过该地址访问它。',
    exited: '{{host}} 上的 {{launcher}} 以退出码 {{code}} 结束。',
    noResult: '所有主机都已结束，但 rank 0 没有输出结果。',
    checkFailed: '对全 1 张量做 all_reduce 的结果不等于 world size {{world}}：集合通信结果错误。',
    worldMismatch: '本次运行有 {{got}} 个 rank，而启动的是 {{expected}} 个。',
    notParsed: 'hccl_test 没有输出结果表。',
  },
  cause: {
    tls: {
      message: 'NPU 之间的 TLS 开关不一致（EI0016 / tlsStatus 不一致）：HCCL 拒绝在它们之间建链。',
      fix: '在每台主机的每个设备上把 TLS 开关设为一致：hccn_tool -i <id> -tls -s enable 0（或全部为 1），再用 hccn_tool -i <id> -tls -g 检查。',
    },
    portInUse: {
      message: 'HCCL 或 rendezvous 需要的地址/端口已被占用（EI0019，address already in use）。',
      fix: '停止占用该端口的进程，或让 HCCL 换用其他端口：HCCL_IF_BASE_PORT / HCCL_HOST_SOCKET_PORT_RANGE（主机侧 60000–60031）、HCCL_NPU_SOCKET_PORT_RANGE=auto（NPU 侧 16666）、为 torchrun 换一个 master 端口；用 sysctl net.ipv4.ip_local_reserved_ports 预留端口段。',
    },
    socketTimeout: {
      message:
        '某个 rank 等待对端 socket 直到超时（EI0006）：对端始终没有连接——卡住、崩溃、启动过晚，或链路被阻断（防火墙、网段、TLS）。',
      fix: '先找出报其他错误的 rank；将各 rank 的启动时间差与 HCCL_CONNECT_TIMEOUT 比较（大规模集群需调大）；检查设备网络（hccn_tool -ping）、TLS 一致性以及 HCCL 端口上的防火墙。',
    },
    topoExchange: {
      message:
        '通信域初始化超时：部分 rank 始终没有连上 root rank（EI0015，topo exchange socket 超时 / failed to connect agent）。',
      fix: '检查 HCCL 使用的主机网卡（HCCL_SOCKET_IFNAME / HCCL_IF_IP）能否访问 root 主机、其 60000–60031 端口是否开放，并调大 HCCL_CONNECT_TIMEOUT；大规模集群还需在 root 主机上调大 net.core.somaxconn、tcp_max_syn_backlog 和 ulimit -n。',
    },
    notifyTimeout: {
      message:
        '集合通信等待远端 rank 直到 HCCL_EXEC_TIMEOUT（EI0002）：某个 rank 卡住、过慢，或执行了不同的计算。',
      fix: '先找出最先失败或落后的 rank（plog、心跳日志）；确保所有 rank 执行相同的集合通信；只有当某个 rank 确实需要更长时间（如保存检查点）时才调大 HCCL_EXEC_TIMEOUT。',
    },
    previousJob: {
      message: 'NPU 仍被上一个作业占用（EJ0001：HCCP 初始化失败；hccl_test retcode 7）。',
      fix: '在每台主机上结束残留的训练或 hccl_test 进程（例如 pkill -9 -f "all_reduce_test|mpirun"），等待 10 秒后重试。',
    },
    rankTable: {
      message: 'rank table 或某个 rank 无效（EI0004）。',
      fix: '检查 RANK_TABLE_FILE：路径真实可读、内容为合法 JSON，device id、IP 和 rank id 存在且唯一。',
    },
    environment: {
      message:
        '某个 HCCL 设置无效或指向不存在的对象（EI0001：取值越界、找不到网卡、IP 协议族混用）。',
      fix: '修正日志中指出的 HCCL_* 变量（HCCL_SOCKET_IFNAME 必须是本机网卡名，HCCL_IF_IP 必须是本机地址）；所有主机使用同一种 IP 协议族。',
    },
    argsInconsistent: {
      message: '各 rank 执行集合通信时参数不一致（EI0005：数据量、类型或 CANN 版本不同）。',
      fix: '在每台主机上运行相同的脚本以及相同版本的 CANN / torch_npu。',
    },
    deviceMemory: {
      message: 'NPU 内存不足以分配 HCCL 资源（EI0011）。',
      fix: '调小 HCCL_BUFFSIZE 或 batch；确认没有其他进程占用该 NPU 的内存。',
    },
    linkFault: {
      message:
        '集合通信过程中 HCCL 失去了对端（心跳丢失 / error CQE）：某个进程退出或 RoCE 链路故障。',
      fix: '查看日志中指出的 rank；检查链路闪断和错误计数（hccn_tool -link_stat -g、-stat -g）、光模块，以及 NPU 与交换机的 MTU/PFC 配置是否一致。',
    },
    rendezvousUnreachable: {
      message:
        '各 rank 在超时前无法连上 rendezvous（第一台主机上 torchrun 的 c10d store）：防火墙或错误的地址阻断了其端口。',
      fix: '在主机之间放通 master 端口（以及 worker 端口），例如第一台主机上的 nft/iptables 或 firewalld；确认第一台主机的地址是其他主机能访问的地址。',
    },
    connectionRefused: {
      message: '某个 rank 的连接被拒绝：该地址和端口上没有进程在监听（对端已退出，或防火墙拒绝）。',
      fix: '查看对端日志，找出它没有监听的原因；检查主机之间的防火墙，并确认地址确实属于对端。',
    },
    hostnameResolution: {
      message: '某个主机名无法解析为地址（name or service not known）。',
      fix: '在每台主机的 /etc/hosts（或 DNS）中加入集群内所有主机及其他主机访问它所用的地址。',
    },
    glooInterface: {
      message: 'gloo 无法在所选网卡上建立连接。',
      fix: '在每台主机上把 GLOO_SOCKET_IFNAME 设为承载集群地址的网卡。',
    },
    noTorch: {
      message: '某台主机的 python3 没有 torch。',
      fix: '在每台主机上、在非交互式登录使用的 Python 中安装相同版本的 torch（NPU 主机还需 torch_npu）。',
    },
    mpi: {
      message: 'mpirun 无法在其他主机上启动进程（找不到 orted、缺少 MPI 库、主机名未知）。',
      fix: '在每台主机的相同路径安装相同的 MPI，为非交互式登录把其 bin 加入 PATH、lib 加入 LD_LIBRARY_PATH，配置主机间免密 SSH，并把所有主机名写入 /etc/hosts。',
    },
  },
};
