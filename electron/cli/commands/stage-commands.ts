import type { Command } from 'commander';
import { stageNs } from '../../../shared/stages';
import { textIn } from '../../core/i18n';
import { STAGE_DEFINITIONS } from '../../core/stages/registry';
import { EXIT, ExitWith, printJson, type CommandEnv } from '../io';
import type { Configure } from '../program';
import { withCore } from './with-core';

/**
 * The stages' own commands (`amw precision import …`), from the stage definitions' `cli.commands`:
 * nothing here names a stage. A run's status decides the exit code as for `amw run`.
 */
export function registerStageCommands(
  program: Command,
  env: CommandEnv,
  configure: Configure,
): void {
  const { t, io, global } = env;
  for (const d of STAGE_DEFINITIONS)
    for (const c of d.cli?.commands ?? []) {
      let parent = program;
      for (const word of c.path.slice(0, -1))
        parent =
          parent.commands.find((x) => x.name() === word) ??
          configure(parent.command(word)).description(t(`${stageNs(d.shared.id)}:name`));
      const cmd = configure(parent.command(c.path[c.path.length - 1]!)).description(t(c.help));
      for (const a of c.args) cmd.argument(a);
      for (const o of c.options) cmd.option(o.flags, t(o.help));
      cmd.option('--json', t('cli.opt.json'));
      cmd.action(async (...xs: unknown[]) => {
        const args = xs.slice(0, c.args.length) as string[];
        const o = xs[c.args.length] as Record<string, unknown>;
        const show = textIn(global.lang);
        const res = await withCore(env, (core) => c.run(args, o, (m, i) => core.call(m, i), show));
        if (o.json) printJson(io, res.json);
        else io.stdout(res.text);
        if (res.status === 'error') throw new ExitWith(EXIT.error);
        if (res.status === 'fail') throw new ExitWith(EXIT.failed);
      });
    }
}
