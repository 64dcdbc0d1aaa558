import type { Command } from 'commander';
import { stageNs } from '../../../shared/stages';
import { textIn } from '../../core/i18n';
import type { StageCommandContext } from '../../core/stages/define';
import { STAGE_DEFINITIONS } from '../../core/stages/registry';
import { EXIT, ExitWith, printJson, type CommandEnv } from '../io';
import type { Configure } from '../program';
import { awaitJob, hostAccessOptions, lazyCore, passwordFrom, type HostAccess } from './with-core';

/**
 * The stages' own commands (`amw precision import …`, `amw profile compare …`), from the stage
 * definitions' `cli.commands`: nothing here names a stage. A run's status decides the exit code
 * as for `amw run`. The engine opens on the command's first call, so one that only reads local
 * files leaves the data dir alone.
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
          configure(parent.command(word)).description(
            t(d.cli?.groups?.[word] ?? `${stageNs(d.shared.id)}:name`),
          );
      let cmd = configure(parent.command(c.path[c.path.length - 1]!)).description(t(c.help));
      if (c.hostAccess) cmd = hostAccessOptions(cmd, env);
      for (const a of c.args) cmd.argument(a);
      for (const o of c.options) cmd.option(o.flags, t(o.help));
      cmd.option('--json', t('cli.opt.json'));
      cmd.action(async (...xs: unknown[]) => {
        const args = xs.slice(0, c.args.length) as string[];
        const o = xs[c.args.length] as Record<string, unknown> & HostAccess;
        const show = textIn(global.lang);
        const lazy = lazyCore(env, o);
        const ctx: StageCommandContext = {
          wait: async (jobId, progress = false) => awaitJob(env, await lazy.get(), jobId, progress),
          note: (line) => io.stderr(`${line}\n`),
          password: () => passwordFrom(env, o),
        };
        let res;
        try {
          res = await c.run(args, o, async (m, i) => (await lazy.get()).call(m, i), show, ctx);
        } catch (err) {
          throw lazy.mapError(err);
        } finally {
          await lazy.close();
        }
        if (o.json) printJson(io, res.json);
        else io.stdout(res.text);
        if (res.status === 'error') throw new ExitWith(EXIT.error);
        if (res.status === 'fail') throw new ExitWith(EXIT.failed);
      });
    }
}
