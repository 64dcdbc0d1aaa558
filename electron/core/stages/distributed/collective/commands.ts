import { remoteCommand, shellQuote } from '../../../ssh/quote';
import { PROBE_FILE } from './detect';

/**
 * Every command the collective runs on a host, built here with shellQuote/remoteCommand only.
 * A run lives in `dir` (relative to the home directory): the probe, `node.log` (the launcher's
 * output), torchrun's per-rank logs under `logs/`, `launcher.pid` (the process group's leader),
 * `stop` (a kill was asked: a late launch does not start). Every process of the run carries
 * AMW_COLLECTIVE_RUN=<run id> in its environment, so a process that left the group is found too.
 */
export const RUN_VAR = 'AMW_COLLECTIVE_RUN';
export const LOG_FILE = 'node.log';

export interface TorchrunPlan {
  nodes: number;
  perNode: number;
  nodeRank: number;
  endpoint: { address: string; port: number };
  runId: string;
  /** This host runs the c10d store (the first host). */
  isHost: boolean;
  readTimeoutS: number;
  joinTimeoutS: number;
  /** `--local_addr`/`--local-addr` when this torchrun has it, with the host's address. */
  localAddr?: { flag: '--local_addr' | '--local-addr'; address: string };
  backend: 'gloo' | 'hccl';
  sizes: number[];
  timeoutS: number;
}

/** argv of one node's torchrun (`python3 -m torch.distributed.run`, the same program). */
export function torchrunArgv(p: TorchrunPlan, entry: 'torchrun' | 'srun' = 'torchrun'): string[] {
  return [
    'python3',
    '-m',
    'torch.distributed.run',
    `--nnodes=${p.nodes}`,
    `--nproc_per_node=${p.perNode}`,
    // c10d assigns ranks itself; the node rank is passed for logs and older launch paths
    ...(entry === 'torchrun' ? [`--node_rank=${p.nodeRank}`] : []),
    '--rdzv_backend=c10d',
    `--rdzv_endpoint=${p.endpoint.address}:${p.endpoint.port}`,
    `--rdzv_id=${p.runId}`,
    `--rdzv_conf=${[
      // under srun every node runs the same line: torch decides which host holds the store
      ...(entry === 'torchrun' ? [`is_host=${p.isHost ? 1 : 0}`] : []),
      `read_timeout=${p.readTimeoutS}`,
      `join_timeout=${p.joinTimeoutS}`,
    ].join(',')}`,
    '--max_restarts=0',
    '--monitor_interval=1',
    '--log_dir=logs',
    // every rank's stdout (its AMW_COLLECTIVE lines) in the node's log too, stderr in its own file:
    // Std.ALL ("3") does not parse under torch 1.13 on Python 3.11, and tee adds to redirects
    '--redirects=2',
    '--tee=1',
    // one srun line serves every node: the first host's address would be wrong on the others
    ...(p.localAddr && entry === 'torchrun' ? [`${p.localAddr.flag}=${p.localAddr.address}`] : []),
    PROBE_FILE,
    ...probeArgs(p.backend, p.sizes, p.timeoutS),
  ];
}

function probeArgs(backend: 'gloo' | 'hccl', sizes: number[], timeoutS: number): string[] {
  return [
    'run',
    '--backend',
    backend,
    '--sizes',
    sizes.map((s) => String(Math.floor(s))).join(','),
    '--timeout',
    String(timeoutS),
  ];
}

/** argv of msrun on one node (MindSpore's launcher, knowledge §6.2). */
export function msrunArgv(p: {
  workers: number;
  perNode: number;
  nodeRank: number;
  master: { address: string; port: number };
  timeoutS: number;
  sizes: number[];
}): string[] {
  return [
    'msrun',
    `--worker_num=${p.workers}`,
    `--local_worker_num=${p.perNode}`,
    `--master_addr=${p.master.address}`,
    `--master_port=${p.master.port}`,
    `--node_rank=${p.nodeRank}`,
    '--log_dir=logs',
    '--join=True',
    `--cluster_time_out=${p.timeoutS}`,
    PROBE_FILE,
    ...probeArgs('hccl', p.sizes, p.timeoutS),
    '--framework',
    'mindspore',
  ];
}

/** srun across the allocation's nodes: one torchrun per node, Slurm killing all on a bad exit. */
export function srunArgv(nodeNames: string[], runId: string, torchrun: string[]): string[] {
  return [
    'srun',
    `--nodes=${nodeNames.length}`,
    '--ntasks-per-node=1',
    `--nodelist=${nodeNames.join(',')}`,
    `--job-name=${runId}`,
    '--kill-on-bad-exit=1',
    ...torchrun,
  ];
}

/** hccl_test's hostfile: MPICH `ip:procs` (the CANN README), Open MPI `ip slots=procs`. */
export function hccltestHostfile(addresses: string[], perNode: number, openMpi: boolean): string {
  return `${addresses.map((a) => (openMpi ? `${a} slots=${perNode}` : `${a}:${perNode}`)).join('\n')}\n`;
}

/** mpirun of hccl_test's all_reduce_test across the hostfile (knowledge §4.1). */
export function mpirunArgv(p: {
  hcclTest: string;
  ranks: number;
  perNode: number;
  minBytes: number;
  maxBytes: number;
  openMpi: boolean;
}): string[] {
  return [
    'mpirun',
    ...(p.openMpi
      ? ['-hostfile', 'hostfile', '-x', 'LD_LIBRARY_PATH', '-x', RUN_VAR]
      : ['-f', 'hostfile']),
    '-n',
    String(p.ranks),
    `${p.hcclTest}/bin/all_reduce_test`,
    '-b',
    String(p.minBytes),
    '-e',
    String(p.maxBytes),
    '-f',
    '2',
    '-d',
    'fp32',
    '-o',
    'sum',
    '-p',
    String(p.perNode),
  ];
}

/**
 * Starts a launcher in the run's directory as the leader of a new session (setsid -w waits and
 * passes its exit code on), its pid written first, its output in node.log. `stdinFile` saves the
 * command's stdin there first (hccl_test's hostfile).
 */
export function launchCommand(p: {
  dir: string;
  runId: string;
  env: Record<string, string>;
  argv: string[];
  setsid: boolean;
  ascendEnv: boolean;
  stdinFile?: string;
}): string {
  const d = shellQuote(p.dir);
  const env = Object.entries({ [RUN_VAR]: p.runId, ...p.env }).map(
    ([k, v]) => `${/^[A-Z_][A-Z0-9_]*$/.test(k) ? k : 'INVALID_NAME'}=${shellQuote(v)}`,
  );
  const leader = `sh -c 'echo $$ > launcher.pid; exec "$@"' amw-collective`;
  return [
    `cd ${d} || exit 3`,
    '[ -e stop ] && exit 125',
    ...(p.stdinFile ? [`cat > ${shellQuote(p.stdinFile)}`] : []),
    ...(p.ascendEnv
      ? [
          '[ -f /usr/local/Ascend/ascend-toolkit/set_env.sh ] && . /usr/local/Ascend/ascend-toolkit/set_env.sh >/dev/null 2>&1',
        ]
      : []),
    `export ${env.join(' ')}`,
    `exec ${p.setsid ? 'setsid -w ' : ''}${leader} ${remoteCommand(p.argv[0]!, ...p.argv.slice(1))} > ${LOG_FILE} 2>&1 < /dev/null`,
  ].join('\n');
}

/**
 * Stops every process of the run on this host: the `stop` marker first (a launch still on its
 * way does not start), then SIGTERM to the launcher's process group and to every process whose
 * environment carries the run's marker, up to 5 s for them to go, then SIGKILL; prints how many
 * are left (`left=N`). `scancel` too when the run went through Slurm.
 */
export function killCommand(dir: string, runId: string, slurm = false): string {
  const d = shellQuote(dir);
  const mark = shellQuote(`${RUN_VAR}=${runId}`);
  return [
    `[ -d ${d} ] && : > ${d}/stop`,
    ...(slurm ? [`command -v scancel >/dev/null 2>&1 && scancel --name=${shellQuote(runId)}`] : []),
    `ours() { for p in /proc/[0-9]*; do grep -qsxzF ${mark} "$p/environ" && echo "\${p#/proc/}"; done; }`,
    'sweep() {',
    `  pg=$(cat ${d}/launcher.pid 2>/dev/null)`,
    '  case "$pg" in ""|*[!0-9]*) ;; *) kill -"$1" -"$pg" 2>/dev/null ;; esac',
    '  for p in $(ours); do kill -"$1" "$p" 2>/dev/null; done',
    '}',
    'sweep TERM',
    'i=0',
    'while [ $i -lt 20 ] && [ -n "$(ours)" ]; do sleep 0.25; i=$((i+1)); done',
    'sweep KILL',
    'sleep 0.3',
    'printf "left=%s\\n" "$(ours | wc -l)"',
  ].join('\n');
}

/**
 * The run's logs on this host, each file after a marker line, cut to its last `maxBytes`:
 * node.log, torchrun's per-rank stdout/stderr, msrun's worker logs, and the CANN plogs written
 * since the run started (~/ascend/log). `remove` deletes the run's directory afterwards.
 */
export function gatherCommand(
  dir: string,
  marker: string,
  maxBytes: number,
  remove: boolean,
): string {
  const d = shellQuote(dir);
  const m = shellQuote(marker);
  return [
    `cd ${d} 2>/dev/null || exit 0`,
    `show() { printf '\\n%s %s\\n' ${m} "$1"; tail -c ${Math.floor(maxBytes)} -- "$1"; }`,
    `[ -f ${LOG_FILE} ] && show ${LOG_FILE}`,
    `find logs -type f \\( -name '*.log' -o -name '*.txt' \\) 2>/dev/null | sort | head -n 64 | while IFS= read -r f; do show "$f"; done`,
    `[ -f hostfile ] && show hostfile`,
    `find "$HOME/ascend/log" -type f -name '*.log' -newer ${PROBE_FILE} 2>/dev/null | head -n 16 | while IFS= read -r f; do show "$f"; done`,
    ...(remove ? [`cd && rm -rf -- ${d}`] : []),
    'exit 0',
  ].join('\n');
}

/** Splits gatherCommand's output back into files. */
export function splitGathered(stdout: string, marker: string): { file: string; text: string }[] {
  const out: { file: string; text: string }[] = [];
  for (const part of stdout.split(`\n${marker} `).slice(1)) {
    const nl = part.indexOf('\n');
    const file = (nl < 0 ? part : part.slice(0, nl)).slice(0, 500);
    out.push({ file, text: nl < 0 ? '' : part.slice(nl + 1) });
  }
  return out;
}
