import { readFileSync, writeFileSync } from 'node:fs';
import { AmwError, fromWireError } from '../../../../shared/errors';
import type { StageCli, StageCommand } from '../define';
import { baseCheckId } from './checks';

/** The rank table file's text, read here (the CLI's machine); a clear error when it cannot be. */
function readRankTable(file: unknown): { rankTable?: string; rankTableFile?: string } {
  if (typeof file !== 'string') return {};
  try {
    return { rankTable: readFileSync(file, 'utf8'), rankTableFile: file };
  } catch (err) {
    throw new AmwError('VALIDATION', `Cannot read the rank table ${file}.`, {
      messageKey: 'stage-distributed:cli.readFailed',
      file,
      error: err instanceof Error ? err.message : String(err),
    });
  }
}

const int = (v: unknown) => (v === undefined ? undefined : Number(v));

type Call = Parameters<NonNullable<StageCli['json']>>[1];

/** Waits for a job through the engine's `call` (a stage command has no event stream). */
async function waitJob(call: Call, id: string) {
  for (;;) {
    const job = await call('jobs.get', { id });
    if (job.status !== 'queued' && job.status !== 'running') return job;
    await new Promise((r) => setTimeout(r, 300));
  }
}

/** `amw distributed rank-table HOST[,HOST…] [--tag T] --out FILE`: a v1.0 table from what the hosts report. */
const rankTableCommand: StageCommand = {
  path: ['distributed', 'rank-table'],
  args: ['[hosts]'],
  help: 'stage-distributed:cli.rankTableCmd',
  options: [
    { flags: '--out <file>', key: 'out', help: 'stage-distributed:cli.out' },
    { flags: '--tag <tag>', key: 'tag', help: 'stage-distributed:cli.tag' },
  ],
  async run(args, opts, call, show) {
    const hosts = args[0] ? args[0].split(',').filter(Boolean) : undefined;
    const started = await call('stages.run', {
      stage: 'distributed',
      hosts,
      tag: typeof opts.tag === 'string' ? opts.tag : undefined,
      collective: false,
    } as never);
    const job = await waitJob(call, started.jobId);
    if (job.status !== 'succeeded')
      throw job.error ? fromWireError(job.error) : new AmwError('INTERNAL', job.status);
    const r = await call('distributed.get', { stageRunId: started.stageRunId });
    const servers = Array.isArray(
      (r.rankTable.doc as { server_list?: unknown[] } | null)?.server_list,
    )
      ? (r.rankTable.doc as { server_list: unknown[] }).server_list.length
      : 0;
    const run = await call('stages.get', { id: started.stageRunId });
    const check = run.checks.find((c) => c.id === 'dist.rank-table');
    if (!r.rankTable.doc || typeof opts.out !== 'string')
      return {
        json: {
          written: null,
          stageRunId: started.stageRunId,
          reason: check ? show(check.summary) : null,
        },
        text: `${show({ key: 'stage-distributed:cli.notWritten', params: { reason: check ? check.summary : '' } })}\n`,
        status: 'fail',
      };
    writeFileSync(opts.out, `${JSON.stringify(r.rankTable.doc, null, 2)}\n`);
    return {
      json: {
        written: opts.out,
        servers,
        ranks: r.rankTable.ranks,
        stageRunId: started.stageRunId,
      },
      text: `${show({ key: 'stage-distributed:cli.written', params: { file: opts.out, servers, ranks: r.rankTable.ranks } })}\n`,
      status: 'pass',
    };
  },
};

/**
 * `amw run HOST[,HOST…]|--tag TAG --stage distributed [--rank-table FILE] [--json]`; the JSON
 * document is the issue's: a row per check, host and device, and the collective's headline.
 */
export const distributedCli: StageCli = {
  options: [
    { flags: '--tag <tag>', key: 'tag', help: 'stage-distributed:cli.tag' },
    { flags: '--rank-table <file>', key: 'rankTable', help: 'stage-distributed:cli.rankTable' },
    { flags: '--no-collective', key: 'collective', help: 'stage-distributed:cli.noCollective' },
    { flags: '--concurrency <n>', key: 'concurrency', help: 'stage-distributed:cli.concurrency' },
    { flags: '--host-timeout <s>', key: 'hostTimeout', help: 'stage-distributed:cli.hostTimeout' },
    { flags: '--deadline <s>', key: 'deadline', help: 'stage-distributed:cli.deadline' },
    { flags: '--launcher <name>', key: 'launcher', help: 'stage-distributed:cli.launcher' },
  ],
  input: (o) => ({
    tag: o.tag,
    ...readRankTable(o.rankTable),
    collective: o.collective === false ? false : undefined,
    concurrency: int(o.concurrency),
    hostTimeoutS: int(o.hostTimeout),
    collectiveDeadlineS: int(o.deadline),
    launcher: o.launcher,
  }),
  async json(run, call, stageRunId) {
    const record = await call('stages.get', { id: stageRunId });
    const r = await call('distributed.get', { stageRunId }).catch(() => null);
    const byId = new Map(record.checks.map((c) => [c.id, c]));
    const collectiveRow = run.checks.find((c) => c.id === 'dist.collective');
    return {
      session: run.session,
      stage: 'distributed',
      stageRunId,
      hosts: r ? r.hosts.map((h) => h.host) : run.host.split(','),
      status: run.status,
      checks: run.checks.map((c) => {
        const o = byId.get(c.id);
        return {
          id: baseCheckId(c.id),
          host: o?.host ?? null,
          ...(o?.device !== undefined ? { device: o.device } : {}),
          status: c.status,
          summary: c.summary,
          evidence: c.evidence,
        };
      }),
      collective: r?.collective
        ? {
            launcher: r.collective.launcher,
            backend: r.collective.backend,
            worldSize: r.collective.worldSize,
            ok: r.collective.ok,
            ...(r.collective.busBandwidthGBs !== undefined
              ? { busBandwidthGBs: r.collective.busBandwidthGBs }
              : {}),
            ...(r.collective.ok ? {} : { error: collectiveRow?.summary ?? null }),
          }
        : null,
    };
  },
  commands: [rankTableCommand],
};
