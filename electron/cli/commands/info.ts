import type { Command } from 'commander';
import { printJson, type CommandEnv } from '../io';
import type { Configure } from '../program';
import { warnIfDamaged, withCore } from './with-core';

export function registerInfoCommand(program: Command, env: CommandEnv, configure: Configure): void {
  configure(program.command('info'))
    .description(env.t('cli.cmd.info'))
    .option('--json', env.t('cli.opt.json'))
    .action(async (opts: { json?: boolean }) => {
      const info = await withCore(env, async (core) => {
        const i = await core.call('app.info', {});
        warnIfDamaged(env, core.location.dbPath);
        return i;
      });
      if (opts.json) return printJson(env.io, info);
      const { t } = env;
      env.io.stdout(
        [
          `${t('app.name')} ${info.version}`,
          `${t('pages.settings.dataDir')}: ${info.dataDir}`,
          `${t('pages.settings.dbPath')}: ${info.dbPath}`,
          `${t('pages.settings.schema')}: ${info.schemaVersion}`,
          '',
        ].join('\n'),
      );
    });
}
