import * as z from 'zod';
import { shellQuote } from '../../../ssh/quote';

/** What a host can launch a collective with, as its probe reported it (host output: untrusted). */
export interface DetectedHost {
  commands: Record<ToolName, string | null>;
  /** SLURM_JOB_ID of the login environment, when the host is inside a Slurm allocation. */
  slurmJob: string | null;
  /** Directory of hccl_test (bin/all_reduce_test inside), when installed. */
  hcclTest: string | null;
  /** First line of `mpirun --version`. */
  mpi: string | null;
  /** IPv4 addresses per interface. */
  addresses: { iface: string; address: string }[];
  python: z.infer<typeof Detect> | null;
  /** What python3 printed instead of a detect line. */
  pythonError: string | null;
}

const TOOLS = ['python3', 'torchrun', 'mpirun', 'srun', 'sinfo', 'msrun', 'setsid'] as const;
export type ToolName = (typeof TOOLS)[number];

const Detect = z.object({
  kind: z.literal('detect'),
  python: z.string().max(40),
  hostname: z.string().max(255),
  torch: z.string().max(80).nullable(),
  torchLocalAddr: z.enum(['--local_addr', '--local-addr']).nullable(),
  torchNpu: z.boolean(),
  mindspore: z.boolean(),
});

export const PROBE_FILE = 'distributed_allreduce.py';

/**
 * One round trip per host: the probe arrives on stdin and is saved in the run's directory, then
 * the tools, the addresses, hccl_test and Slurm are looked at and the probe's `detect` runs.
 * `dir` is relative to the home directory (commands start there).
 */
export function detectCommand(dir: string): string {
  const d = shellQuote(dir);
  return [
    'umask 077',
    `mkdir -p ${d} && cat > ${d}/${PROBE_FILE} || exit 3`,
    // set_env.sh puts CANN's tools (and hccl_test's libraries) where a job would find them
    '[ -f /usr/local/Ascend/ascend-toolkit/set_env.sh ] && . /usr/local/Ascend/ascend-toolkit/set_env.sh >/dev/null 2>&1',
    `for c in ${TOOLS.join(' ')}; do printf 'cmd.%s=%s\\n' "$c" "$(command -v "$c" 2>/dev/null)"; done`,
    `printf 'slurm=%s\\n' "\${SLURM_JOB_ID:-}"`,
    'for t in "${ASCEND_TOOLKIT_HOME:-/usr/local/Ascend/ascend-toolkit/latest}/tools/hccl_test" /usr/local/Ascend/cann/tools/hccl_test; do [ -x "$t/bin/all_reduce_test" ] && { printf \'hccl_test=%s\\n\' "$t"; break; }; done',
    `command -v mpirun >/dev/null 2>&1 && printf 'mpi=%s\\n' "$(mpirun --version 2>&1 | head -n 1)"`,
    `ip -o -4 addr show 2>/dev/null | awk '{print "addr=" $2 " " $4}'`,
    `python3 ${d}/${PROBE_FILE} detect 2>&1 | head -c 8192`,
    'exit 0',
  ].join('\n');
}

export function parseDetect(stdout: string): DetectedHost {
  const out: DetectedHost = {
    commands: Object.fromEntries(TOOLS.map((t) => [t, null])) as DetectedHost['commands'],
    slurmJob: null,
    hcclTest: null,
    mpi: null,
    addresses: [],
    python: null,
    pythonError: null,
  };
  const other: string[] = [];
  for (const line of stdout.split('\n')) {
    const cmd = /^cmd\.([a-z0-9]+)=(.*)$/.exec(line);
    if (cmd && (TOOLS as readonly string[]).includes(cmd[1]!)) {
      out.commands[cmd[1] as ToolName] = cmd[2]!.trim() || null;
    } else if (line.startsWith('slurm=')) out.slurmJob = line.slice(6).trim() || null;
    else if (line.startsWith('hccl_test=')) out.hcclTest = line.slice(10).trim() || null;
    else if (line.startsWith('mpi=')) out.mpi = line.slice(4).trim().slice(0, 200) || null;
    else if (line.startsWith('addr=')) {
      const m = /^addr=(\S+) (\d+\.\d+\.\d+\.\d+)(?:\/\d+)?$/.exec(line.trim());
      if (m) out.addresses.push({ iface: m[1]!.replace(/@.*$/, ''), address: m[2]! });
    } else if (line.startsWith('AMW_COLLECTIVE ')) {
      try {
        const parsed = Detect.safeParse(JSON.parse(line.slice('AMW_COLLECTIVE '.length)));
        if (parsed.success) out.python = parsed.data;
        else other.push(line);
      } catch {
        other.push(line);
      }
    } else if (line.trim()) other.push(line);
  }
  if (!out.python && other.length) out.pythonError = other.join('\n').slice(-2000);
  return out;
}
