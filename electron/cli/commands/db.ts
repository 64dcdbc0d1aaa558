import type { Command } from 'commander';
import type { BackupResult, CheckResult, JobRecord, MethodName } from '../../../shared/api';
import { fromWireError } from '../../../shared/errors';
import type { Core } from '../../core/api/core';
import { EXIT, ExitWith, printJson, type CommandEnv } from '../io';
import type { Configure } from '../program';
import { withCore } from './with-core';

/**
 * Starts a job through the contract, shows its progress on stderr, cancels it on Ctrl+C, and
 * resolves with the finished record.
 */
async function runJob(
  env: CommandEnv,
  core: Core,
  method: Extract<MethodName, 'maintenance.backup' | 'maintenance.check'>,
): Promise<JobRecord> {
  const { io, t } = env;
  const { jobId } = await core.call(method, {});
  let last = '';
  const off = core.on('job.updated', (job) => {
    if (job.id !== jobId || !job.message) return;
    const pct = job.progress === null ? '' : ` ${Math.round(job.progress * 100)}%`;
    const line = `${t(`jobs.step.${job.message.key}`, job.message.params ?? {})}${pct}`;
    if (line !== last) io.stderr(`${line}\n`);
    last = line;
  });
  let stop = false;
  void io.interrupted().then(() => {
    if (!stop) core.jobs.cancel(jobId);
  });
  try {
    const job = await core.jobs.wait(jobId);
    if (job.status !== 'succeeded')
      throw fromWireError(job.error ?? { code: 'INTERNAL', message: job.status });
    return job;
  } finally {
    stop = true;
    off();
  }
}

export function registerDbCommands(program: Command, env: CommandEnv, configure: Configure): void {
  const { t, io } = env;
  const db = configure(program.command('db')).description(t('cli.cmd.db'));

  configure(db.command('backup'))
    .description(t('cli.cmd.dbBackup'))
    .option('--json', t('cli.opt.json'))
    .action(async (opts: { json?: boolean }) => {
      const job = await withCore(env, (core) => runJob(env, core, 'maintenance.backup'));
      const result = job.result as BackupResult;
      if (opts.json) return printJson(io, result);
      io.stdout(`${t('cli.backupDone', { ...result })}\n`);
    });

  configure(db.command('check'))
    .description(t('cli.cmd.dbCheck'))
    .option('--json', t('cli.opt.json'))
    .action(async (opts: { json?: boolean }) => {
      const job = await withCore(env, (core) => runJob(env, core, 'maintenance.check'));
      const r = job.result as CheckResult;
      if (opts.json) printJson(io, r);
      else if (r.ok) io.stdout(`${t('cli.checkOk', { count: r.artifacts.checked })}\n`);
      else {
        io.stdout(
          `${t('cli.checkProblems', {
            integrity: r.integrity.length,
            fk: r.foreignKeys.length,
            missing: r.artifacts.missing.length,
            corrupt: r.artifacts.corrupt.length,
          })}\n`,
        );
      }
      if (!r.ok) throw new ExitWith(EXIT.failed);
    });
}
