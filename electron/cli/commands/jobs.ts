import type { Command } from 'commander';
import { jobTitle } from '../../../shared/i18n';
import { printJson, type CommandEnv } from '../io';
import type { Configure } from '../program';
import { withCore } from './with-core';

export function registerJobsCommand(program: Command, env: CommandEnv, configure: Configure): void {
  const { t, io } = env;
  configure(program.command('jobs'))
    .description(t('cli.cmd.jobs'))
    .option('--json', t('cli.opt.json'))
    .action(async (opts: { json?: boolean }) => {
      const jobs = await withCore(env, (core) => core.call('jobs.list', { limit: 50 }));
      if (opts.json) return printJson(io, jobs);
      if (!jobs.length) return io.stdout(`${t('cli.noJobs')}\n`);
      for (const job of jobs) {
        io.stdout(
          `${job.createdAt}  ${t(`jobs.status.${job.status}`).padEnd(12)} ${jobTitle(t, job.kind)}  ${job.id}\n`,
        );
      }
    });
}
