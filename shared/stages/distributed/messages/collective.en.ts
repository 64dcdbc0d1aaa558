/**
 * Texts of the collective launcher (`electron/core/stages/distributed/collective`), keys under
 * `collective.` of namespace `stage-distributed`. The failure causes' keys are named by
 * resources/knowledge/distributed/failure-causes.json.
 */
export const collectiveEn = {
  notBuilt: 'The collective launcher is not part of this build yet: no collective was run.',
  progress: {
    detecting: 'Looking at what {{hosts}} hosts can launch with…',
    launching: 'Starting {{launcher}} on {{hosts}} hosts ({{world}} ranks)…',
    hcclTest: 'Running hccl_test all_reduce through mpirun…',
    stopping: 'Stopping every rank on every host…',
    gathering: 'Gathering the ranks’ logs…',
    done: 'Collective finished.',
  },
  note: {
    gloo: 'No NPU with torch_npu on every host: the all_reduce ran on the CPU with the gloo backend. It checks the launch, the rendezvous and the host network, not HCCL or the NPU links.',
    hccl: 'The all_reduce ran on the NPUs with the hccl backend (torch_npu), one rank per NPU.',
    launcher: 'Launched with {{launcher}}: {{detail}}',
    torchrunDetail:
      'torchrun, c10d rendezvous at {{endpoint}}, {{nodes}} nodes × {{perNode}} ranks.',
    srunDetail: 'the hosts are a Slurm partition: srun starts torchrun once per node.',
    msrunDetail: 'a MindSpore project (mindspore importable, torch not): msrun starts the workers.',
    mpirunDetail: 'hccl_test all_reduce_test through mpirun ({{mpi}}).',
    hostnameMaster:
      'torch {{version}} on {{host}} hands the rank-0 address to the other ranks as the hostname of rank 0’s host: that name must resolve to an address every host reaches.',
    hcclTest:
      'hccl_test (HCCL’s own test) measured the bandwidth through mpirun; the table is its alg_bandwidth, bus bandwidth = alg × 2(n−1)/n.',
    hcclTestFailed: 'hccl_test through mpirun did not give a result: {{error}}',
    busbw:
      'Bus bandwidth = algorithm bandwidth × 2(n−1)/n for all_reduce (n = {{world}} ranks), as nccl-tests and hccl_test define it.',
    leftover:
      '{{count}} process(es) of this run were still alive on {{host}} after SIGTERM and SIGKILL.',
    killed: 'Every rank was stopped on every host (process group and run marker), nothing left.',
    badRow:
      'hccl_test output line {{line}}, column {{column}}: “{{text}}” is not a result row: skipped.',
    rowFailed: 'hccl_test output line {{line}}: check_result is “{{result}}” for {{bytes}} bytes.',
  },
  error: {
    deadline: 'The collective did not finish within {{seconds}} s: every rank was stopped.',
    cancelled: 'The collective was cancelled: every rank was stopped.',
    noHosts: 'No host was given for the collective.',
    unreachable: 'Could not reach {{host}}: {{error}}',
    noPython: '{{host}} has no python3 on the PATH of a non-interactive login.',
    noTorch: '{{host}} has no PyTorch (python3 cannot find torch), so torchrun cannot start there.',
    noLauncher:
      'No launcher works on every host: torchrun needs torch, msrun needs mindspore, mpirun needs hccl_test on NPU hosts.',
    launcherMissing: '{{launcher}} was asked for but {{host}} does not have it.',
    noAddress:
      '{{host}} has no interface with the address {{address}} the other hosts are to reach it on.',
    exited: '{{launcher}} on {{host}} stopped with exit code {{code}}.',
    noResult: 'Every host finished but rank 0 printed no result.',
    checkFailed:
      'The all_reduce of ones did not sum to the world size {{world}}: the collective is wrong.',
    worldMismatch: 'The run had {{got}} ranks where {{expected}} were started.',
    notParsed: 'hccl_test printed no result table.',
  },
  cause: {
    tls: {
      message:
        'The TLS switch differs between NPUs (EI0016 / inconsistent tlsStatus): HCCL refuses to link them.',
      fix: 'Make the TLS switch the same on every device of every host: hccn_tool -i <id> -tls -s enable 0 (or 1 everywhere), then check with hccn_tool -i <id> -tls -g.',
    },
    portInUse: {
      message:
        'An address/port HCCL or the rendezvous needs is already in use (EI0019, address already in use).',
      fix: 'Stop what holds the port, or move HCCL off it: HCCL_IF_BASE_PORT / HCCL_HOST_SOCKET_PORT_RANGE (host side, 60000–60031), HCCL_NPU_SOCKET_PORT_RANGE=auto (NPU side 16666), another master port for torchrun; reserve the range with sysctl net.ipv4.ip_local_reserved_ports.',
    },
    socketTimeout: {
      message:
        'A rank waited for its peer’s socket until the timeout (EI0006): the peer never connected — stuck, crashed, started too late, or the link is blocked (firewall, subnet, TLS).',
      fix: 'Find the rank with another error first; check the start skew against HCCL_CONNECT_TIMEOUT (raise it for large fleets); check the device network (hccn_tool -ping), TLS consistency and firewalls on HCCL’s ports.',
    },
    topoExchange: {
      message:
        'Communicator init timed out: some ranks never reached the root rank (EI0015, topo exchange socket timeout / failed to connect agent).',
      fix: 'Check the host NIC HCCL uses (HCCL_SOCKET_IFNAME / HCCL_IF_IP) reaches the root host, that ports 60000–60031 are open on it, and raise HCCL_CONNECT_TIMEOUT; on big fleets raise net.core.somaxconn, tcp_max_syn_backlog and ulimit -n on the root host.',
    },
    notifyTimeout: {
      message:
        'A collective waited for a remote rank until HCCL_EXEC_TIMEOUT (EI0002): a rank is stuck, slower, or ran different work.',
      fix: 'Look for the rank that failed or lagged first (plog, heartbeat lines); make sure every rank runs the same collectives; raise HCCL_EXEC_TIMEOUT only if a rank is legitimately slow (e.g. saving a checkpoint).',
    },
    previousJob: {
      message:
        'The NPU is still held by a previous job (EJ0001: HCCP could not initialise; hccl_test retcode 7).',
      fix: 'Kill the leftover training or hccl_test processes on every host (e.g. pkill -9 -f "all_reduce_test|mpirun"), wait 10 s, and run again.',
    },
    rankTable: {
      message: 'The rank table or a rank is invalid (EI0004).',
      fix: 'Check RANK_TABLE_FILE: a readable real path, valid JSON, device ids, IPs and rank ids that exist and are unique.',
    },
    environment: {
      message:
        'An HCCL setting is invalid or names something that does not exist (EI0001: a value out of range, an interface not found, mixed IP families).',
      fix: 'Correct the HCCL_* variable the log names (HCCL_SOCKET_IFNAME must name an interface of this host; HCCL_IF_IP a local address); use one IP family everywhere.',
    },
    argsInconsistent: {
      message:
        'Ranks ran the collective with different arguments (EI0005: count, type or CANN version differ).',
      fix: 'Run the same script and the same CANN / torch_npu on every host.',
    },
    deviceMemory: {
      message: 'Not enough NPU memory for HCCL’s resources (EI0011).',
      fix: 'Lower HCCL_BUFFSIZE or the batch; make sure no other process holds the NPU’s memory.',
    },
    linkFault: {
      message:
        'HCCL lost a peer during the collective (heartbeat lost / error CQE): a process exited or the RoCE link failed.',
      fix: 'Check the named rank’s log; check link flaps and error counters (hccn_tool -link_stat -g, -stat -g), optics, and MTU/PFC settings against the switch.',
    },
    rendezvousUnreachable: {
      message:
        'The ranks could not reach the rendezvous (torchrun’s c10d store on the first host) before the timeout: a firewall or a wrong address blocks its port.',
      fix: 'Open the master port (and the workers’ ports) between the hosts, e.g. nft/iptables or firewalld on the first host; check the first host’s address is the one the others reach.',
    },
    connectionRefused: {
      message:
        'A rank’s connection was refused: nothing listens on that address and port (the peer exited, or a firewall rejects it).',
      fix: 'Look at the peer’s log for why it is not listening; check firewalls between the hosts and that the address is the peer’s.',
    },
    hostnameResolution: {
      message: 'A host name did not resolve to an address (name or service not known).',
      fix: 'Add every host of the fleet to /etc/hosts (or DNS) on every host, with the address the others reach it on.',
    },
    glooInterface: {
      message: 'gloo could not set up its connections on the chosen network interface.',
      fix: 'Set GLOO_SOCKET_IFNAME to the interface that carries the fleet’s addresses on each host.',
    },
    noTorch: {
      message: 'python3 on a host has no torch.',
      fix: 'Install the same torch (and torch_npu on NPU hosts) on every host, in the Python a non-interactive login runs.',
    },
    mpi: {
      message:
        'mpirun could not start its processes on the other hosts (orted not found, MPI libraries missing, host name unknown).',
      fix: 'Install the same MPI at the same path on every host, put its bin on PATH and its lib on LD_LIBRARY_PATH for non-interactive logins, passwordless SSH between hosts, every host name in /etc/hosts.',
    },
  },
} as const;

export type CollectiveMessages = typeof collectiveEn;
