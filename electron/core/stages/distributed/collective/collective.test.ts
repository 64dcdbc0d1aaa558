import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { localTransport } from '../../../local/local-exec';
import { resourcesDir } from '../../../paths';
import { algBandwidthGBs, allReduceBusBandwidthGBs, bandwidthRow } from './bandwidth';
import {
  gatherCommand,
  hccltestHostfile,
  killCommand,
  launchCommand,
  mpirunArgv,
  msrunArgv,
  splitGathered,
  srunArgv,
  torchrunArgv,
} from './commands';
import { detectCommand, parseDetect, type DetectedHost } from './detect';
import { loadFailureCauses, nameCause } from './failure-causes';
import { parseHcclTestOutput } from './hccl-test-output';
import { choosePlan, nodeEnv } from './plan';
import type { CollectiveHost } from './types';

// hccl_test's table as the official doc prints it (knowledge §4.3, hicann/oam-tools execution.md)
const DOC_SAMPLE = `the minbytes is 8192, maxbytes is 67108864, iters is 20, warmup_iters is 5
data_size(Bytes): |   avg_time(us): | alg_bandwidth(GB/s): | check_result:
8192              |     764.55    |       0.00998        | success
16384             |     858.80    |       0.01777        | success
32768             |     901.10    |       0.03387        | success
65536             |     900.00    |       0.06782        | success
131072            |     928.50    |       0.13147        | success
262144            |    1573.45    |       0.15516        | success
524288            |    1831.25    |       0.26664        | success
1048576           |    1778.30    |       0.54916        | success
2097152           |    1763.30    |       1.10765        | success
4194304           |    1801.75    |       2.16803        | success
8388608           |    1767.65    |       4.41971        | success
16777216          |    1940.90    |       8.05039        | success
33554432          |    1714.85    |      18.22317        | success
67108864          |    2630.20    |      23.76245        | success
`;
// the binary's own header spelling (aveg_time), knowledge §4.3 (HCCL-VM doc)
const BINARY_SAMPLE = `data_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): | check_result:
64                | 1000.00        | 0.00006              | success
`;

describe('hccl_test output (knowledge §4.3)', () => {
  it('reads every row of the official sample, in order', () => {
    const out = parseHcclTestOutput(DOC_SAMPLE);
    expect(out.table).toBe(true);
    expect(out.warnings).toEqual([]);
    expect(out.rows).toHaveLength(14);
    expect(out.rows[0]).toEqual({
      bytes: 8192,
      us: 764.55,
      algBandwidthGBs: 0.00998,
      check: 'success',
    });
    expect(out.rows.at(-1)).toEqual({
      bytes: 67108864,
      us: 2630.2,
      algBandwidthGBs: 23.76245,
      check: 'success',
    });
  });

  it('reads the binary’s aveg_time header too', () => {
    expect(parseHcclTestOutput(BINARY_SAMPLE).rows).toEqual([
      { bytes: 64, us: 1000, algBandwidthGBs: 0.00006, check: 'success' },
    ]);
  });

  it('its printed GB/s are GiB/s (2^30): the workbench recomputes from bytes and time (1e9, as nccl-tests)', () => {
    for (const r of parseHcclTestOutput(DOC_SAMPLE).rows) {
      expect(r.bytes / (r.us * 1e-6) / 2 ** 30).toBeCloseTo(r.algBandwidthGBs, 4);
      expect(bandwidthRow(r.bytes, r.us, 8).algBandwidthGBs).toBeCloseTo(r.bytes / r.us / 1e3, 9);
    }
  });

  it('a damaged row is skipped naming line and column; a failed check is kept and said', () => {
    const text = DOC_SAMPLE.replace(
      '1048576           |    1778.30',
      '1048576           |    17x8.30',
    )
      .replace(
        '8388608           |    1767.65    |       4.41971        | success',
        '8388608           |    1767.65    |       4.41971        | failed',
      )
      .concat('16 | 1.0 | 2.0\n');
    const out = parseHcclTestOutput(text);
    expect(out.rows).toHaveLength(13);
    expect(out.rows.find((r) => r.bytes === 8388608)?.check).toBe('failed');
    expect(out.warnings).toEqual([
      {
        key: 'stage-distributed:collective.note.badRow',
        params: { line: 10, column: 20, text: expect.stringContaining('17x8.30') },
      },
      {
        key: 'stage-distributed:collective.note.rowFailed',
        params: { line: 13, result: 'failed', bytes: 8388608 },
      },
      {
        key: 'stage-distributed:collective.note.badRow',
        params: { line: 17, column: 1, text: '16 | 1.0 | 2.0' },
      },
    ]);
  });

  it('garbage after the header never throws and never yields a row it did not read', () => {
    let seed = 7;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const alphabet = '0123456789 .|-eE+xNaN\tsuccessfailedNULL\u00e9\u0000';
    for (let n = 0; n < 300; n++) {
      const junk = Array.from({ length: 1 + Math.floor(rnd() * 6) }, () =>
        Array.from(
          { length: Math.floor(rnd() * 60) },
          () => alphabet[Math.floor(rnd() * alphabet.length)],
        ).join(''),
      ).join('\n');
      const out = parseHcclTestOutput(`${BINARY_SAMPLE}${junk}\n`);
      for (const r of out.rows) {
        expect(
          Number.isFinite(r.bytes) && Number.isFinite(r.us) && Number.isFinite(r.algBandwidthGBs),
        ).toBe(true);
        expect(['success', 'failed', 'NULL']).toContain(r.check);
      }
      expect(out.rows[0]).toEqual({
        bytes: 64,
        us: 1000,
        algBandwidthGBs: 0.00006,
        check: 'success',
      });
    }
  });

  it('the residual-process failure (retcode 7) has no table, and its cause is named', () => {
    const text = `the minbytes is 8192, maxbytes is 2147483648, iters is 20, warmup_iters is 5
hccl interface return err ./common/src/hccl_test_common.cc:538, retcode: 7 
This is an error in init_hcclComm.
`;
    expect(parseHcclTestOutput(text)).toEqual({ table: false, rows: [], warnings: [] });
    expect(nameCause([{ text }])?.id).toBe('previousJob');
  });
});

describe('bandwidth', () => {
  it('busbw = algbw × 2(n−1)/n for all_reduce; one rank moves nothing across', () => {
    expect(algBandwidthGBs(1e9, 1e6)).toBe(1);
    expect(allReduceBusBandwidthGBs(10, 2)).toBe(10);
    expect(allReduceBusBandwidthGBs(10, 8)).toBe(17.5);
    expect(allReduceBusBandwidthGBs(10, 1)).toBe(10);
    expect(bandwidthRow(1 << 20, 0, 4).algBandwidthGBs).toBe(0);
  });
});

describe('failure causes (resources/knowledge/distributed/failure-causes.json)', () => {
  it('loads, every message and fix a key with text in collective.en.ts', () => {
    const causes = loadFailureCauses();
    expect(causes.length).toBeGreaterThan(10);
    expect(causes.map((c) => c.id)).toContain('socketTimeout');
  });

  it('names the cause of the real messages quoted in knowledge §5', () => {
    const cases: [string, string][] = [
      [
        'EI0006: 2024-08-05-18:15:21.270.506 Getting socket times out. Reason: Remote Rank did not send the data in time. Please check the reason for the rank being stuck',
        'socketTimeout',
      ],
      [
        'Value Disable for config "tls" is invalid. Expected Value:"All ranks are consistent. Current status : rankList for enabled tls:[0]; rankList for disabled tls:[1]; rankList for query failure tls:".',
        'tls',
      ],
      [
        'Communication_Error_Bind_IP_Port(EI0019): Failed to enable listening for the host network adapter socket.Reason: The IP address 192.168.1.100 and port 50001 have already been bound.',
        'portInUse',
      ],
      ['topo exchange server get socket timeout! timeout[120 s]', 'topoExchange'],
      [
        'EI0002: The wait execution of the Notify register times out. Reason: The Notify register has not received the Notify record from remote rank [4294967295].',
        'notifyTimeout',
      ],
      [
        'EJ0001: ... Failed to initialize the HCCP process. Reason: Maybe the last training process is running.',
        'previousJob',
      ],
      [
        'torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store has failed. See inner exception for details.',
        'rendezvousUnreachable',
      ],
      ['bash: orted: 未找到命令', 'mpi'],
    ];
    for (const [text, id] of cases)
      expect(nameCause([{ text: `noise\n${text}\nmore` }])?.id, text).toBe(id);
    expect(nameCause([{ text: 'all fine' }])).toBeUndefined();
  });

  it('HCCL’s own code wins over the generic socket text printed with it', () => {
    const cause = nameCause([
      { text: 'RuntimeError: Connection refused' },
      { text: '[ERROR] HCCL ... Get_Socket_Timeout(EI0006): Getting socket times out.' },
    ]);
    expect(cause).toEqual({
      id: 'socketTimeout',
      message: { key: 'stage-distributed:collective.cause.socketTimeout.message' },
      fix: { key: 'stage-distributed:collective.cause.socketTimeout.fix' },
    });
  });

  it('a malformed file fails loudly, naming the file and the field', () => {
    const dir = mkdtempSync(join(tmpdir(), 'amw-causes-'));
    try {
      const file = join(dir, 'failure-causes.json');
      const good = JSON.parse(
        readFileSync(
          join(resourcesDir(), 'knowledge', 'distributed', 'failure-causes.json'),
          'utf8',
        ),
      ) as { causes: { fix: string }[] };
      good.causes[2]!.fix = 'collective.cause.nope.fix';
      writeFileSync(file, JSON.stringify(good));
      expect(() => loadFailureCauses(file)).toThrow(
        /failure-causes\.json is not valid: causes\.2\.fix/,
      );
      writeFileSync(file, '{"causes": [');
      expect(() => loadFailureCauses(file)).toThrow(/failure-causes\.json is not valid/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('launch commands', () => {
  const plan = {
    nodes: 2,
    perNode: 8,
    nodeRank: 1,
    endpoint: { address: '10.0.0.1', port: 29400 },
    runId: 'amw-x',
    isHost: false,
    readTimeoutS: 30,
    joinTimeoutS: 90,
    backend: 'hccl' as const,
    sizes: [65536, 1 << 20],
    timeoutS: 90,
  };

  it('torchrun: c10d rendezvous at the first host, node rank, one rank per NPU, the probe', () => {
    expect(torchrunArgv(plan)).toEqual([
      'python3',
      '-m',
      'torch.distributed.run',
      '--nnodes=2',
      '--nproc_per_node=8',
      '--node_rank=1',
      '--rdzv_backend=c10d',
      '--rdzv_endpoint=10.0.0.1:29400',
      '--rdzv_id=amw-x',
      '--rdzv_conf=is_host=0,read_timeout=30,join_timeout=90',
      '--max_restarts=0',
      '--monitor_interval=1',
      '--log_dir=logs',
      '--redirects=2',
      '--tee=1',
      'distributed_allreduce.py',
      'run',
      '--backend',
      'hccl',
      '--sizes',
      '65536,1048576',
      '--timeout',
      '90',
    ]);
    expect(
      torchrunArgv({ ...plan, localAddr: { flag: '--local-addr', address: '10.0.0.2' } }),
    ).toContain('--local-addr=10.0.0.2');
  });

  it('srun: one torchrun per node of the allocation, killed together on a bad exit', () => {
    const argv = srunArgv(['n1', 'n2'], 'amw-x', torchrunArgv(plan, 'srun'));
    expect(argv.slice(0, 6)).toEqual([
      'srun',
      '--nodes=2',
      '--ntasks-per-node=1',
      '--nodelist=n1,n2',
      '--job-name=amw-x',
      '--kill-on-bad-exit=1',
    ]);
    expect(argv).not.toContain('--node_rank=1');
    const withAddr = srunArgv(
      ['n1'],
      'amw-x',
      torchrunArgv({ ...plan, localAddr: { flag: '--local-addr', address: '10.0.0.1' } }, 'srun'),
    );
    expect(withAddr.some((x) => x.startsWith('--local-addr'))).toBe(false);
    expect(argv).toContain('--rdzv_conf=read_timeout=30,join_timeout=90');
  });

  it('msrun: worker counts, master, node rank, its log dir (knowledge §6.2)', () => {
    expect(
      msrunArgv({
        workers: 16,
        perNode: 8,
        nodeRank: 1,
        master: { address: '10.0.0.1', port: 8118 },
        timeoutS: 600,
        sizes: [1024],
      }).slice(0, 10),
    ).toEqual([
      'msrun',
      '--worker_num=16',
      '--local_worker_num=8',
      '--master_addr=10.0.0.1',
      '--master_port=8118',
      '--node_rank=1',
      '--log_dir=logs',
      '--join=True',
      '--cluster_time_out=600',
      'distributed_allreduce.py',
    ]);
  });

  it('mpirun + hccl_test: MPICH and Open MPI hostfiles and flags (knowledge §4.1)', () => {
    expect(hccltestHostfile(['10.78.130.22', '10.78.130.21'], 8, false)).toBe(
      '10.78.130.22:8\n10.78.130.21:8\n',
    );
    expect(hccltestHostfile(['10.78.130.22'], 8, true)).toBe('10.78.130.22 slots=8\n');
    const p = { hcclTest: '/t', ranks: 16, perNode: 8, minBytes: 8192, maxBytes: 67108864 };
    expect(mpirunArgv({ ...p, openMpi: false })).toEqual(
      'mpirun -f hostfile -n 16 /t/bin/all_reduce_test -b 8192 -e 67108864 -f 2 -d fp32 -o sum -p 8'.split(
        ' ',
      ),
    );
    expect(mpirunArgv({ ...p, openMpi: true }).slice(0, 3)).toEqual([
      'mpirun',
      '-hostfile',
      'hostfile',
    ]);
  });

  it('hostile directory and environment values reach the host as literal text', async () => {
    const base = mkdtempSync(join(tmpdir(), 'amw-coll-'));
    const dir = join(base, `it's "$(touch pwned)" \`x\` 雪`);
    try {
      execFileSync('mkdir', ['-p', dir]);
      const r = await localTransport.exec(
        launchCommand({
          dir,
          runId: 'amw-t',
          env: { WEIRD: `a'b"$(touch pwned2);c` },
          argv: ['sh', '-c', 'printf "%s|%s" "$WEIRD" "$AMW_COLLECTIVE_RUN"'],
          setsid: true,
          ascendEnv: false,
        }),
      );
      expect(r.code).toBe(0);
      expect(readFileSync(join(dir, 'node.log'), 'utf8')).toBe(`a'b"$(touch pwned2);c|amw-t`);
      expect(execFileSync('ls', ['-A', base], { encoding: 'utf8' }).trim()).toBe(
        `it's "$(touch pwned)" \`x\` 雪`,
      );
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });

  it('the kill stops the launcher’s group and a process that left it; a late launch does not start', async () => {
    const base = mkdtempSync(join(tmpdir(), 'amw-kill-'));
    const runId = `amw-k${process.pid}`;
    try {
      // a launcher whose child escapes into its own session, as a daemonising rank would
      const launch = localTransport.exec(
        launchCommand({
          dir: base,
          runId,
          env: {},
          argv: ['sh', '-c', 'setsid sleep 300 & sleep 300'],
          setsid: true,
          ascendEnv: false,
        }),
      );
      const count = () =>
        execFileSync(
          'sh',
          ['-c', `grep -lsxzF AMW_COLLECTIVE_RUN=${runId} /proc/[0-9]*/environ | wc -l`],
          {
            encoding: 'utf8',
          },
        ).trim();
      for (let i = 0; i < 100 && count() !== '4'; i++) await new Promise((r) => setTimeout(r, 100));
      // setsid -w waiting, the group's sh and sleep, the sleep that escaped into its own session
      expect(count()).toBe('4');
      const killed = await localTransport.exec(killCommand(base, runId));
      expect(killed.stdout).toContain('left=0');
      expect((await launch).code).not.toBe(0);
      expect(count()).toBe('0');
      const late = await localTransport.exec(
        launchCommand({
          dir: base,
          runId,
          env: {},
          argv: ['sleep', '300'],
          setsid: true,
          ascendEnv: false,
        }),
      );
      expect(late.code).toBe(125);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  }, 30_000);

  it('gathers every log file after its marker, cut to its end, and splits them back', async () => {
    const base = mkdtempSync(join(tmpdir(), 'amw-gather-'));
    try {
      execFileSync('mkdir', ['-p', join(base, 'logs/run_1/attempt_0/0')]);
      writeFileSync(join(base, 'distributed_allreduce.py'), '');
      writeFileSync(join(base, 'node.log'), 'x'.repeat(5000) + 'END');
      writeFileSync(
        join(base, 'logs/run_1/attempt_0/0/stderr.log'),
        'Traceback\nRuntimeError: boom\n',
      );
      const r = await localTransport.exec(gatherCommand(base, '@@M', 1000, false));
      const files = splitGathered(r.stdout, '@@M');
      expect(files.map((f) => f.file)).toEqual(['node.log', 'logs/run_1/attempt_0/0/stderr.log']);
      expect(files[0]!.text).toHaveLength(1000);
      expect(files[0]!.text.endsWith('xEND')).toBe(true);
      expect(files[1]!.text).toContain('RuntimeError: boom');
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
});

describe('detection', () => {
  it('runs for real here: the probe saved, tools and addresses seen, python answering', async () => {
    const base = mkdtempSync(join(tmpdir(), 'amw-detect-'));
    try {
      const probe = readFileSync(
        join(resourcesDir(), 'probes', 'distributed_allreduce.py'),
        'utf8',
      );
      const r = await localTransport.exec(detectCommand(join(base, 'run')), { stdin: probe });
      const d = parseDetect(r.stdout);
      expect(readFileSync(join(base, 'run', 'distributed_allreduce.py'), 'utf8')).toBe(probe);
      expect(d.commands.python3).toMatch(/python3$/);
      expect(d.addresses).toContainEqual({ iface: 'lo', address: '127.0.0.1' });
      expect(d.python?.python).toMatch(/^3\.\d+\.\d+$/);
      expect(d.pythonError).toBeNull();
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });

  it('untrusted output: a forged detect line is refused, not believed', () => {
    const d = parseDetect(
      'cmd.python3=/usr/bin/python3\ncmd.evil=/x\naddr=eth0 10.1.2.3/24\naddr=eth0 not-an-ip\nAMW_COLLECTIVE {"kind":"detect","python":"3.11.2","hostname":"h","torch":"2.1","torchLocalAddr":"--exec=rm","torchNpu":false,"mindspore":false}\n',
    );
    expect(d.python).toBeNull();
    expect(d.pythonError).toContain('--exec=rm');
    expect(d.addresses).toEqual([{ iface: 'eth0', address: '10.1.2.3' }]);
    expect(Object.keys(d.commands)).not.toContain('evil');
  });
});

describe('launcher choice', () => {
  const host = (over: Partial<CollectiveHost> = {}): CollectiveHost => ({
    name: over.name ?? 'h',
    transport: localTransport,
    address: '10.0.0.1',
    npuCount: 0,
    hasNpu: false,
    ...over,
  });
  const det = (
    over: Partial<DetectedHost> & { py?: Partial<NonNullable<DetectedHost['python']>> | null } = {},
  ) => {
    const base = parseDetect('cmd.python3=/usr/bin/python3\ncmd.setsid=/usr/bin/setsid\n');
    const { py, ...rest } = over;
    return {
      ...base,
      python:
        py === null
          ? null
          : {
              kind: 'detect' as const,
              python: '3.11.2',
              hostname: 'h',
              torch: '2.1.0',
              torchLocalAddr: null,
              torchNpu: false,
              mindspore: false,
              ...py,
            },
      ...rest,
    };
  };

  it('CPU hosts with torch: torchrun and gloo, one rank each, said so', () => {
    const p = choosePlan([host(), host()], [det(), det()]);
    expect(p).toMatchObject({ launcher: 'torchrun', backend: 'gloo', perNode: 1, world: 2 });
    expect('notes' in p && p.notes.map((n) => n.key)).toEqual([
      'stage-distributed:collective.note.gloo',
    ]);
  });

  it('NPU hosts with torch_npu: hccl, one rank per NPU (the smallest host decides)', () => {
    const npu = (n: number) => host({ hasNpu: true, npuCount: n });
    const p = choosePlan(
      [npu(8), npu(16)],
      [det({ py: { torchNpu: true } }), det({ py: { torchNpu: true } })],
    );
    expect(p).toMatchObject({ launcher: 'torchrun', backend: 'hccl', perNode: 8, world: 16 });
    // one host without torch_npu: gloo for all, not a half-HCCL run
    expect(choosePlan([npu(8), npu(8)], [det({ py: { torchNpu: true } }), det()])).toMatchObject({
      backend: 'gloo',
    });
  });

  it('a Slurm partition: srun; a MindSpore project: msrun; hccl_test only: mpirun', () => {
    const slurm = det({
      commands: { ...det().commands, srun: '/usr/bin/srun', sinfo: '/usr/bin/sinfo' },
    });
    expect(choosePlan([host(), host()], [slurm, slurm])).toMatchObject({ launcher: 'srun' });
    const npu = host({ hasNpu: true, npuCount: 8 });
    const ms = det({
      py: { torch: null, mindspore: true },
      commands: { ...det().commands, msrun: '/usr/bin/msrun' },
    });
    expect(choosePlan([npu, npu], [ms, ms])).toMatchObject({ launcher: 'msrun', backend: 'hccl' });
    const hccl = det({
      py: { torch: null },
      hcclTest: '/usr/local/Ascend/ascend-toolkit/latest/tools/hccl_test',
      commands: { ...det().commands, mpirun: '/usr/bin/mpirun' },
    });
    expect(choosePlan([npu, npu], [hccl, hccl])).toMatchObject({ launcher: 'mpirun', world: 16 });
  });

  it('each node’s own interface and HCCL address; none when one launcher carries its environment to all', () => {
    expect(nodeEnv('gloo', '10.0.0.2', 'eth0', false)).toEqual({
      GLOO_SOCKET_IFNAME: 'eth0',
      OMP_NUM_THREADS: '1',
    });
    expect(nodeEnv('hccl', '10.0.0.2', 'eth0', false)).toEqual({
      GLOO_SOCKET_IFNAME: 'eth0',
      HCCL_IF_IP: '10.0.0.2',
    });
    expect(nodeEnv('hccl', '10.0.0.2', 'eth0', true)).toEqual({});
    expect(nodeEnv('gloo', '10.0.0.2', undefined, false)).toEqual({ OMP_NUM_THREADS: '1' });
  });

  it('what cannot launch says which host and why', () => {
    expect(
      choosePlan([host({ name: 'a' }), host({ name: 'b' })], [det(), det({ py: { torch: null } })]),
    ).toEqual({
      error: { key: 'stage-distributed:collective.error.noTorch', params: { host: 'b' } },
    });
    expect(
      choosePlan(
        [host({ name: 'a' })],
        [det({ py: null, commands: { ...det().commands, python3: null } })],
      ),
    ).toEqual({
      error: { key: 'stage-distributed:collective.error.noPython', params: { host: 'a' } },
    });
    expect(choosePlan([host({ name: 'a' })], [det()], 'msrun')).toEqual({
      error: {
        key: 'stage-distributed:collective.error.launcherMissing',
        params: { launcher: 'msrun', host: 'a' },
      },
    });
  });
});
