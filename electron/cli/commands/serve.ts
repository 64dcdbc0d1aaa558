import type { Command } from 'commander';
import { AmwError } from '../../../shared/errors';
import { msg } from '../../../shared/api/text';
import { createCore } from '../../core/api/core';
import { MetricsExporter } from '../../core/hosts/metrics-exporter';
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
    .option('--metrics-hosts <hosts>', t('cli.opt.metricsHosts'))
    .option('--metrics-interval <s>', t('cli.opt.metricsInterval'), '15')
    .action(
      async (opts: {
        port: string;
        bind: string;
        allowRemote?: boolean;
        hostLabel: boolean;
        metricsHosts?: string;
        metricsInterval: string;
      }) => {
        const port = Number(opts.port);
        if (!Number.isInteger(port) || port < 0 || port > 65535) {
          throw new AmwError(
            'VALIDATION',
            msg('errors.text.portRange', { value: String(opts.port) }),
          );
        }
        const intervalSec = Number(opts.metricsInterval);
        if (!Number.isInteger(intervalSec) || intervalSec < 1 || intervalSec > 60)
          throw new AmwError(
            'VALIDATION',
            t('cli.metrics.badInterval', { value: opts.metricsInterval }),
          );
        const core = createCore({ db: env.global.db, env: io.env });
        // /metrics: the hosts asked for, and whatever monitor the UI has running
        const exporter = new MetricsExporter(core, {
          hosts: (opts.metricsHosts ?? '')
            .split(',')
            .map((h) => h.trim())
            .filter(Boolean),
          intervalSec,
          adopt: true,
        });
        try {
          for (const name of exporter.hosts) await core.call('hosts.get', { name });
          exporter.start();
          const server = await startServer(core, {
            metrics: {
              render: () => exporter.metrics.render(),
              contentType: exporter.metrics.registry.contentType,
            },
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
          await exporter.stop();
          await core.close();
        }
      },
    );
}
