import type { Command } from 'commander';
import { Settings } from '../../../shared/api';
import { AmwError } from '../../../shared/errors';
import { printJson, type CommandEnv } from '../io';
import type { Configure } from '../program';
import { withCore } from './with-core';

export function registerSettingsCommands(
  program: Command,
  env: CommandEnv,
  configure: Configure,
): void {
  const { t, io } = env;
  const settings = configure(program.command('settings')).description(t('cli.cmd.settings'));
  const print = (value: Settings, json?: boolean) =>
    json
      ? printJson(io, value)
      : io.stdout(
          `${Object.entries(value)
            .map(([k, v]) => `${k}=${v}`)
            .join('\n')}\n`,
        );

  configure(settings.command('get'))
    .description(t('cli.cmd.settingsGet'))
    .option('--json', t('cli.opt.json'))
    .action(async (opts: { json?: boolean }) => {
      print(await withCore(env, (core) => core.call('settings.get', {})), opts.json);
    });

  configure(settings.command('set'))
    .description(t('cli.cmd.settingsSet'))
    .argument('<key=value...>')
    .option('--json', t('cli.opt.json'))
    .action(async (pairs: string[], opts: { json?: boolean }) => {
      const keys = Object.keys(Settings.shape);
      const patch: Record<string, string> = {};
      for (const pair of pairs) {
        const eq = pair.indexOf('=');
        const key = pair.slice(0, eq);
        if (eq < 1 || !keys.includes(key)) {
          throw new AmwError('VALIDATION', t('cli.badSetting', { keys: keys.join(', ') }), {
            pair,
          });
        }
        patch[key] = pair.slice(eq + 1);
      }
      // the core validates values against the contract, like any other caller
      print(await withCore(env, (core) => core.call('settings.set', patch)), opts.json);
    });
}
