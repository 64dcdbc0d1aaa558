import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod';
import type { Msg } from '../../../../../shared/api/text';
import { resourcesDir } from '../../../paths';
import { remoteCommand } from '../../../ssh/quote';
import { bandwidthRow } from './bandwidth';
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
import { detectCommand, parseDetect, PROBE_FILE, type DetectedHost } from './detect';
import { nameCause } from './failure-causes';
import { parseHcclTestOutput } from './hccl-test-output';
import { choosePlan, nodeEnv, type Plan } from './plan';
import { ct } from './text';
import type {
  BandwidthRow,
  CollectiveHost,
  CollectiveLog,
  CollectiveOptions,
  CollectiveResult,
} from './types';

export type {
  BandwidthRow,
  CollectiveHost,
  CollectiveLog,
  CollectiveOptions,
  CollectiveResult,
  LauncherName,
} from './types';
export { parseHcclTestOutput } from './hccl-test-output';
export { loadFailureCauses, nameCause } from './failure-causes';

const DEFAULT_SIZES = [65536, 1 << 20, 16 << 20];
const DEFAULT_PORT = 29400;
/** Per log file kept; a rank's log is read from its end, where the error is. */
const LOG_BYTES = 64 * 1024;
/** Stopping and gathering get their own time after a deadline: bounded, not the run's. */
const AFTER_MS = 30_000;

const Rank = z.object({
  kind: z.literal('rank'),
  rank: z.number().int().nonnegative(),
  world: z.number().int().positive(),
  host: z.string().max(255),
});
const Result = z.object({
  kind: z.literal('result'),
  world: z.number().int().positive(),
  check: z.boolean(),
  sizes: z.array(z.object({ bytes: z.number().positive(), us: z.number().nonnegative() })).max(64),
});

function lines(text: string): unknown[] {
  const out: unknown[] = [];
  for (const m of text.matchAll(/AMW_COLLECTIVE (\{[^\n]{0,20000}\})/g)) {
    try {
      out.push(JSON.parse(m[1]!));
    } catch {
      // a line cut by the log's bound or interleaved with another rank's output
    }
  }
  return out;
}

const errText = (err: unknown) => ((err as Error)?.message ?? String(err)).slice(0, 500);

/**
 * A real collective across the hosts: the probe is uploaded and each host looked at (one round
 * trip each, in parallel), then torchrun (c10d rendezvous on the first host) starts one node per
 * host — or srun / msrun / mpirun + hccl_test, as plan.ts decides. The first launcher that fails
 * stops every rank on every host; so do the deadline and the caller's signal. On failure every
 * rank's log (and plog) is gathered and the cause named from failure-causes.json.
 */
export async function runCollective(
  hosts: CollectiveHost[],
  opts: CollectiveOptions,
): Promise<CollectiveResult> {
  const notes: Msg[] = [];
  const result: CollectiveResult = {
    launcher: 'none',
    backend: hosts.length && hosts.every((h) => h.hasNpu) ? 'hccl' : 'gloo',
    worldSize: 0,
    ok: false,
    bandwidth: [],
    logs: [],
    notes,
  };
  if (!hosts.length) return { ...result, error: ct('error.noHosts') };
  const progress = (f: number, m: Msg) => opts.progress?.(f, m);
  const started = Date.now();
  const runId = `amw-${started.toString(36)}-${randomBytes(4).toString('hex')}`;
  const dir = `.amw/collective/${runId}`;
  const marker = `@@AMW-LOG-${runId}`;
  const ctl = new AbortController();
  let stopReason: 'deadline' | 'cancelled' | undefined;
  const onAbort = () => {
    stopReason ??= 'cancelled';
    ctl.abort();
  };
  if (opts.signal.aborted) onAbort();
  opts.signal.addEventListener('abort', onAbort, { once: true });
  const timer = setTimeout(() => {
    stopReason ??= 'deadline';
    ctl.abort();
  }, opts.deadlineMs);
  const left = () => Math.max(1000, started + opts.deadlineMs - Date.now());
  const stoppedError = () =>
    stopReason === 'deadline'
      ? ct('error.deadline', { seconds: Math.round(opts.deadlineMs / 1000) })
      : ct('error.cancelled');

  let launched = false;
  let killing: Promise<void> | undefined;
  /** Every rank on every host stopped, once, whoever asks first. */
  const killAll = (slurm: boolean) =>
    (killing ??= (async () => {
      progress(0.85, ct('progress.stopping'));
      const outs = await Promise.allSettled(
        hosts.map((h) =>
          h.transport.exec(killCommand(dir, runId, slurm), { timeoutMs: AFTER_MS, maxBytes: 4096 }),
        ),
      );
      let clean = true;
      outs.forEach((o, i) => {
        const n =
          o.status === 'fulfilled' ? Number(/left=(\d+)/.exec(o.value.stdout)?.[1] ?? NaN) : NaN;
        if (n > 0 || Number.isNaN(n)) clean = false;
        if (n > 0) notes.push(ct('note.leftover', { host: hosts[i]!.name, count: n }));
      });
      if (clean) notes.push(ct('note.killed'));
    })());

  try {
    // 1. upload the probe and look at every host
    progress(0.02, ct('progress.detecting', { hosts: hosts.length }));
    const probe = readFileSync(join(resourcesDir(), 'probes', PROBE_FILE), 'utf8');
    const answered = new Set<number>();
    const looked = await settledUnlessAborted(
      ctl.signal,
      hosts.map((h, i) =>
        h.transport
          .exec(detectCommand(dir), {
            stdin: probe,
            timeoutMs: Math.min(left(), 120_000),
            signal: ctl.signal,
            maxBytes: 256 * 1024,
          })
          .finally(() => answered.add(i)),
      ),
    );
    if (stopReason) {
      // the deadline met hosts that never answered: name them, not just the deadline
      const silent = hosts.findIndex(
        (_, i) => !answered.has(i) || looked[i]?.status !== 'fulfilled',
      );
      return {
        ...result,
        error:
          stopReason === 'deadline' && silent >= 0
            ? ct('error.unreachable', {
                host: hosts[silent]!.name,
                error: ct('error.deadline', { seconds: Math.round(opts.deadlineMs / 1000) }),
              })
            : stoppedError(),
      };
    }
    const detected: DetectedHost[] = [];
    for (const [i, r] of looked.entries()) {
      if (!r || r.status === 'rejected' || r.value.code !== 0) {
        const error = !r
          ? 'no answer'
          : r.status === 'rejected'
            ? errText(r.reason)
            : `exit ${r.value.code}: ${r.value.stderr}`;
        return {
          ...result,
          error: ct('error.unreachable', { host: hosts[i]!.name, error: error.slice(0, 300) }),
        };
      }
      detected.push(parseDetect(r.value.stdout));
    }
    const plan = choosePlan(hosts, detected, opts.launcher);
    if ('error' in plan) {
      const logs = detected.flatMap((d, i) =>
        d.pythonError ? [{ host: hosts[i]!.name, file: PROBE_FILE, text: d.pythonError }] : [],
      );
      return { ...result, error: plan.error, logs, cause: nameCause(logs) };
    }
    notes.push(...plan.notes);
    Object.assign(result, { launcher: plan.launcher, backend: plan.backend });
    const ifaces = hosts.map((h, i) => {
      const iface = detected[i]!.addresses.find((a) => a.address === h.address)?.iface;
      if (!iface) notes.push(ct('error.noAddress', { host: h.name, address: h.address }));
      return iface;
    });

    // 2. launch
    launched = true;
    const sizes = (opts.sizesBytes?.length ? opts.sizesBytes : DEFAULT_SIZES).filter(
      (s) => Number.isFinite(s) && s >= 4,
    );
    const port = opts.masterPort ?? (plan.launcher === 'msrun' ? 8118 : DEFAULT_PORT);
    const deadlineS = Math.max(1, Math.round(opts.deadlineMs / 1000));
    // the rendezvous gives up well before the deadline, so a blocked port is named, not just killed
    const readTimeoutS = Math.min(300, Math.max(10, Math.floor(deadlineS / 3)));
    // srun and mpirun carry the first host's environment to every node: nothing host-specific then
    const envOf = (i: number) =>
      nodeEnv(
        plan.backend,
        hosts[i]!.address,
        ifaces[i],
        plan.launcher === 'srun' || plan.launcher === 'mpirun',
      );
    const torchPlan = (i: number) => ({
      nodes: hosts.length,
      perNode: plan.perNode,
      nodeRank: i,
      endpoint: { address: hosts[0]!.address, port },
      runId,
      isHost: i === 0,
      readTimeoutS,
      joinTimeoutS: Math.max(readTimeoutS, deadlineS),
      localAddr: detected[i]!.python?.torchLocalAddr
        ? { flag: detected[i]!.python!.torchLocalAddr!, address: hosts[i]!.address }
        : undefined,
      backend: plan.backend,
      sizes,
      timeoutS: Math.max(30, deadlineS),
    });
    if (plan.launcher === 'torchrun' || plan.launcher === 'srun') {
      notes.push(
        ct('note.launcher', {
          launcher: plan.launcher,
          detail: ct(plan.launcher === 'srun' ? 'note.srunDetail' : 'note.torchrunDetail', {
            endpoint: `${hosts[0]!.address}:${port}`,
            nodes: hosts.length,
            perNode: plan.perNode,
          }),
        }),
      );
      const old = detected.find((d) => d.python && !d.python.torchLocalAddr);
      if (old && hosts.length > 1)
        notes.push(
          ct('note.hostnameMaster', {
            version: old.python!.torch ?? '?',
            host: hosts[detected.indexOf(old)]!.name,
          }),
        );
    } else
      notes.push(
        ct('note.launcher', {
          launcher: plan.launcher,
          detail: ct(plan.launcher === 'msrun' ? 'note.msrunDetail' : 'note.mpirunDetail', {
            mpi: detected[0]!.mpi ?? 'mpirun',
          }),
        }),
      );
    progress(
      0.15,
      ct('progress.launching', {
        launcher: plan.launcher,
        hosts: hosts.length,
        world: plan.world,
      }),
    );
    const launches: { host: number; argv: string[]; stdinFile?: string; stdin?: string }[] = [];
    if (plan.launcher === 'torchrun')
      hosts.forEach((_, i) => launches.push({ host: i, argv: torchrunArgv(torchPlan(i)) }));
    else if (plan.launcher === 'msrun')
      hosts.forEach((_, i) =>
        launches.push({
          host: i,
          argv: msrunArgv({
            workers: plan.world,
            perNode: plan.perNode,
            nodeRank: i,
            master: { address: hosts[0]!.address, port },
            timeoutS: Math.max(30, deadlineS),
            sizes,
          }),
        }),
      );
    else if (plan.launcher === 'srun')
      launches.push({
        host: 0,
        argv: srunArgv(
          detected.map((d, i) => d.python?.hostname ?? hosts[i]!.name),
          runId,
          torchrunArgv(torchPlan(0), 'srun'),
        ),
      });
    else launches.push(mpirunLaunch(plan, hosts, detected, sizes));

    /** The launcher that failed first: the others were stopped because of it. */
    let first: { host: number; code: number | null; error?: string } | undefined;
    const codes = await Promise.all(
      launches.map(async (l) => {
        const h = hosts[l.host]!;
        try {
          const end = await h.transport.stream(
            launchCommand({
              dir,
              runId,
              env: envOf(l.host),
              argv: l.argv,
              setsid: Boolean(detected[l.host]!.commands.setsid),
              ascendEnv: plan.backend === 'hccl',
              stdinFile: l.stdinFile,
            }),
            { signal: ctl.signal, stdin: l.stdin },
          );
          const code = end.code ?? (end.signal ? -1 : null);
          if (code !== 0 && !killing && !stopReason) first ??= { host: l.host, code };
          if (code !== 0) void killAll(plan.launcher === 'srun'); // fail fast: stop the others
          return { host: l.host, code };
        } catch (err) {
          if (!killing && !stopReason) first ??= { host: l.host, code: null, error: errText(err) };
          if (!stopReason) void killAll(plan.launcher === 'srun');
          return { host: l.host, code: null, error: errText(err) };
        }
      }),
    );
    const failed = first ?? codes.find((c) => c.code !== 0);
    const good = !stopReason && codes.every((c) => c.code === 0);
    if (!good) await killAll(plan.launcher === 'srun');

    // 3. logs (every rank's, every host's) and the result
    progress(0.9, ct('progress.gathering'));
    const logs = await gatherAll(hosts, dir, marker, good);
    result.logs = good ? [] : logs;
    if (!good) {
      result.error = stopReason
        ? stoppedError()
        : ct('error.exited', {
            launcher: plan.launcher,
            host: hosts[failed?.host ?? 0]!.name,
            code: failed?.code ?? failed?.error ?? 'none',
          });
      result.cause = nameCause([
        ...logs,
        ...codes.flatMap((c) => ('error' in c ? [{ text: String(c.error) }] : [])),
      ]);
      result.worldSize = plan.world;
      return result;
    }
    if (plan.launcher === 'mpirun') return finishHcclTest(result, logs, plan);
    const parsed = readResult(logs);
    if ('error' in parsed) return { ...result, worldSize: plan.world, error: parsed.error, logs };
    result.worldSize = parsed.world;
    if (parsed.world !== plan.world)
      return {
        ...result,
        logs,
        error: ct('error.worldMismatch', { got: parsed.world, expected: plan.world }),
      };
    if (!parsed.check)
      return { ...result, logs, error: ct('error.checkFailed', { world: parsed.world }) };
    result.bandwidth = parsed.rows;
    notes.push(ct('note.busbw', { world: parsed.world }));
    result.ok = true;
    if (plan.hcclTestAfter) await hcclTestAfter(result, hosts, detected, plan, sizes, runId);
    result.busBandwidthGBs = result.bandwidth.at(-1)?.busBandwidthGBs;
    progress(1, ct('progress.done'));
    return result;
  } finally {
    clearTimeout(timer);
    opts.signal.removeEventListener('abort', onAbort);
    if (launched && stopReason) await killAll(false);
  }

  function readResult(
    logs: CollectiveLog[],
  ): { world: number; check: boolean; rows: BandwidthRow[] } | { error: Msg } {
    for (const log of logs) {
      for (const line of lines(log.text)) {
        const r = Result.safeParse(line);
        if (!r.success) continue;
        return {
          world: r.data.world,
          check: r.data.check,
          rows: r.data.sizes.map((s) => bandwidthRow(s.bytes, s.us, r.data.world)),
        };
      }
    }
    return { error: ct('error.noResult') };
  }
}

/**
 * Promise.allSettled, but an abort ends the wait: a host that never answers (a connect that does
 * not see the signal) must not hold the deadline up. Unsettled entries are undefined.
 */
async function settledUnlessAborted<T>(
  signal: AbortSignal,
  promises: Promise<T>[],
): Promise<(PromiseSettledResult<T> | undefined)[]> {
  const out: (PromiseSettledResult<T> | undefined)[] = promises.map(() => undefined);
  const all = Promise.all(
    promises.map((p, i) =>
      p.then(
        (value) => void (out[i] = { status: 'fulfilled', value }),
        (reason: unknown) => void (out[i] = { status: 'rejected', reason }),
      ),
    ),
  );
  if (signal.aborted) return out;
  let onAbort = (): void => undefined;
  const aborted = new Promise<void>((resolve) => {
    onAbort = resolve;
    signal.addEventListener('abort', onAbort, { once: true });
  });
  await Promise.race([all, aborted]);
  signal.removeEventListener('abort', onAbort);
  return out;
}

/** hccl_test's own run: a hostfile of the hosts' addresses on the first host, mpirun from there. */
function mpirunLaunch(
  plan: Plan,
  hosts: CollectiveHost[],
  detected: DetectedHost[],
  sizes: number[],
) {
  const openMpi = /open mpi/i.test(detected[0]!.mpi ?? '');
  return {
    host: 0,
    argv: mpirunArgv({
      hcclTest: detected[0]!.hcclTest!,
      ranks: plan.world,
      perNode: plan.perNode,
      minBytes: Math.min(...sizes),
      maxBytes: Math.max(...sizes),
      openMpi,
    }),
    stdinFile: 'hostfile',
    stdin: hccltestHostfile(
      hosts.map((h) => h.address),
      plan.perNode,
      openMpi,
    ),
  };
}

function finishHcclTest(result: CollectiveResult, logs: CollectiveLog[], plan: Plan) {
  const text = logs.find((l) => l.file === 'node.log' && l.host === logs[0]?.host)?.text ?? '';
  const parsed = parseHcclTestOutput(text);
  result.notes.push(...parsed.warnings);
  result.worldSize = plan.world;
  if (!parsed.rows.length) return { ...result, logs, error: ct('error.notParsed') };
  result.bandwidth = parsed.rows.map((r) => bandwidthRow(r.bytes, r.us, plan.world));
  result.notes.push(ct('note.hcclTest'));
  result.ok = parsed.rows.every((r) => r.check !== 'failed');
  if (!result.ok) result.logs = logs;
  result.busBandwidthGBs = result.bandwidth.at(-1)?.busBandwidthGBs;
  return result;
}

/** After a good torchrun on NPUs: HCCL's own measurement, in its own run directory. */
async function hcclTestAfter(
  result: CollectiveResult,
  hosts: CollectiveHost[],
  detected: DetectedHost[],
  plan: Plan,
  sizes: number[],
  runId: string,
) {
  const id = `${runId}-hccl`;
  const dir = `.amw/collective/${id}`;
  const l = mpirunLaunch({ ...plan, launcher: 'mpirun' }, hosts, detected, sizes);
  const h = hosts[0]!;
  try {
    await h.transport.exec(remoteCommand('mkdir', '-p', '--', dir), { timeoutMs: AFTER_MS });
    const end = await h.transport.stream(
      launchCommand({
        dir,
        runId: id,
        env: {},
        argv: l.argv,
        setsid: Boolean(detected[0]!.commands.setsid),
        ascendEnv: true,
        stdinFile: l.stdinFile,
      }),
      { stdin: l.stdin, timeoutMs: 300_000 },
    );
    const logs = await gatherAll([h], dir, `@@AMW-LOG-${id}`, end.code === 0);
    const parsed = parseHcclTestOutput(logs.find((g) => g.file === 'node.log')?.text ?? '');
    if (end.code !== 0 || !parsed.rows.length) {
      result.notes.push(ct('note.hcclTestFailed', { error: `exit ${end.code}` }));
      return;
    }
    result.bandwidth = parsed.rows.map((r) => bandwidthRow(r.bytes, r.us, plan.world));
    result.notes.push(ct('note.hcclTest'), ...parsed.warnings);
  } catch (err) {
    await h.transport.exec(killCommand(dir, id), { timeoutMs: AFTER_MS }).catch(() => undefined);
    result.notes.push(ct('note.hcclTestFailed', { error: errText(err) }));
  }
}

/** Every host's logs of the run; a host that cannot be read is one log saying so. */
async function gatherAll(
  hosts: CollectiveHost[],
  dir: string,
  marker: string,
  remove: boolean,
): Promise<CollectiveLog[]> {
  const outs = await Promise.allSettled(
    hosts.map((h) =>
      h.transport.exec(gatherCommand(dir, marker, LOG_BYTES, remove), {
        timeoutMs: AFTER_MS,
        maxBytes: 8 * 1024 * 1024,
      }),
    ),
  );
  const logs: CollectiveLog[] = [];
  outs.forEach((o, i) => {
    const host = hosts[i]!.name;
    if (o.status === 'rejected') {
      logs.push({ host, file: '(not gathered)', text: errText(o.reason) });
      return;
    }
    for (const f of splitGathered(o.value.stdout, marker)) {
      const rank = lines(f.text)
        .map((l) => Rank.safeParse(l))
        .find((r) => r.success)?.data?.rank;
      // node.log holds every local rank's lines (tee): a rank only for a per-rank file
      logs.push({
        host,
        file: f.file,
        text: f.text,
        ...(f.file !== 'node.log' && rank !== undefined ? { rank } : {}),
      });
    }
  });
  return logs;
}
