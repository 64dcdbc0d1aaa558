import type { Command } from 'commander';
import { AmwError } from '../../../shared/errors';
import { createCore } from '../../core/api/core';
import { startServer } from '../../server/serve';
import type { CommandEnv } from '../io';
import type { Configure } from '../program';

export function registerServeCommand(
  program: Command,
  env: CommandEnv,
  configure: Configure,
): void {
  const { t, io } = env;
  configure(program.command('serve'))
    .description(t('cli.cmd.serve'))
    .option('--port <n>', t('cli.opt.port'), '0')
    .option('--bind <addr>', t('cli.opt.bind'), '127.0.0.1')
    .option('--allow-remote', t('cli.opt.allowRemote'))
    .option('--no-host-label', t('cli.opt.noHostLabel'))
    .action(
      async (opts: { port: string; bind: string; allowRemote?: boolean; hostLabel: boolean }) => {
        const port = Number(opts.port);
        if (!Number.isInteger(port) || port < 0 || port > 65535) {
          throw new AmwError('VALIDATION', `--port must be 0..65535, not ${opts.port}`);
        }
        const core = createCore({ db: env.global.db, env: io.env });
        try {
          const server = await startServer(core, {
            port,
            bind: opts.bind,
            allowRemote: opts.allowRemote,
            hostLabel: opts.hostLabel,
            token: io.env.AMW_SERVE_TOKEN || undefined,
            warn: (line) => io.stderr(`${line}\n`),
          });
          // The one line scripts (and the e2e tests) wait for: the URL with its token.
          io.stdout(`${server.url}\n`);
          io.stderr(`${t('cli.serving')}\n`);
          await io.interrupted();
          await server.close();
          io.stderr(`${t('cli.stopped')}\n`);
        } finally {
          await core.close();
        }
      },
    );
}
