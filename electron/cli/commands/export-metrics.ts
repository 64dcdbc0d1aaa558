import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { AmwError } from '../../../shared/errors';
import { MetricsExporter } from '../../core/hosts/metrics-exporter';
import { TEXTFILE_NAME, writeTextfile } from '../../core/hosts/textfile';
import type { CommandEnv } from '../io';
import type { Configure } from '../program';
import { hostAccessOptions, passwordFrom, withCore, type HostAccess } from './with-core';

/**
 * `amw export-metrics HOST… --textfile DIR [--interval S] [--once]`: the live monitor's npu-smi
 * readings of each host as a node_exporter textfile (DIR/amw_npu.prom, replaced atomically on
 * every reading). A host that cannot be read is `amw_host_up 0` and a scrape error, not an exit.
 */
export function registerExportMetricsCommand(
  program: Command,
  env: CommandEnv,
  configure: Configure,
): void {
  const { t, io } = env;
  hostAccessOptions(configure(program.command('export-metrics')), env)
    .description(t('cli.cmd.exportMetrics'))
    .argument('<hosts...>', t('cli.arg.metricsHosts'))
    .requiredOption('--textfile <dir>', t('cli.opt.textfile'))
    .option('--interval <s>', t('cli.opt.interval'), '15')
    .option('--once', t('cli.opt.once'))
    .action(
      async (
        names: string[],
        o: HostAccess & { textfile: string; interval: string; once?: boolean },
      ) => {
        const intervalSec = Number(o.interval);
        if (!Number.isInteger(intervalSec) || intervalSec < 1 || intervalSec > 60)
          throw new AmwError('VALIDATION', t('cli.metrics.badInterval', { value: o.interval }));
        const dir = resolve(o.textfile);
        if (!isDir(dir)) throw new AmwError('NOT_FOUND', t('cli.metrics.noDir', { dir }), { dir });
        const hosts = [...new Set(names.flatMap((n) => n.split(',')).map((n) => n.trim()))].filter(
          Boolean,
        );
        const password = await passwordFrom(env, o);
        await withCore(
          env,
          async (core) => {
            // a name that is no host is a typo: said now (an unreachable host is a metric)
            for (const name of hosts) await core.call('hosts.get', { name });
            let writing = Promise.resolve();
            const write = () =>
              (writing = writing.then(async () => {
                writeTextfile(dir, await exporter.metrics.render());
              }));
            // readings arrive host by host: one rewrite per window, not one per host (a render
            // of 4096 chips costs ~150 ms of CPU), still well within a scrape interval
            let pending: NodeJS.Timeout | null = null;
            const changed = () => {
              pending ??= setTimeout(
                () => {
                  pending = null;
                  void write();
                },
                Math.min(intervalSec, 5) * 1000,
              );
            };
            const exporter = new MetricsExporter(core, {
              hosts,
              intervalSec,
              password,
              onChange: o.once ? undefined : changed,
            });
            exporter.start();
            try {
              await exporter.firstRound(Math.max(60, 3 * intervalSec) * 1000);
              await write();
              if (o.once) {
                io.stdout(`${resolve(dir, TEXTFILE_NAME)}\n`);
                return;
              }
              io.stderr(`${t('cli.metrics.writing', { dir, interval: intervalSec })}\n`);
              await io.interrupted();
            } finally {
              if (pending) clearTimeout(pending);
              await exporter.stop();
              await writing;
            }
          },
          o,
        );
      },
    );
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}
