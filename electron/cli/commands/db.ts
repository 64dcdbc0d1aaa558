import type { Command } from 'commander';
import { join } from 'node:path';
import type { BackupResult, CheckResult } from '../../../shared/api';
import { AmwError } from '../../../shared/errors';
import { resolveStoreLocation } from '../../core/paths';
import { EXIT, ExitWith, printJson, type CommandEnv } from '../io';
import type { Configure } from '../program';
import { awaitJob, withCore } from './with-core';

export function registerDbCommands(program: Command, env: CommandEnv, configure: Configure): void {
  const { t, io } = env;
  const db = configure(program.command('db')).description(t('cli.cmd.db'));

  configure(db.command('backup'))
    .description(t('cli.cmd.dbBackup'))
    .option('--json', t('cli.opt.json'))
    .action(async (opts: { json?: boolean }) => {
      const result = (await withCore(env, async (core) =>
        awaitJob(env, core, (await core.call('maintenance.backup', {})).jobId, true),
      )) as BackupResult;
      if (opts.json) return printJson(io, result);
      io.stdout(`${t('cli.backupDone', { ...result })}\n`);
    });

  configure(db.command('check'))
    .description(t('cli.cmd.dbCheck'))
    .option('--json', t('cli.opt.json'))
    .action(async (opts: { json?: boolean }) => {
      const location = resolveStoreLocation({ db: env.global.db }, io.env);
      let r: CheckResult;
      try {
        r = (await withCore(env, async (core) =>
          awaitJob(env, core, (await core.call('maintenance.check', {})).jobId, true),
        )) as CheckResult;
      } catch (err) {
        // a file too damaged to open is the finding this command exists for, not a crash
        if (!(err instanceof AmwError) || err.code !== 'DB_CORRUPT') throw err;
        r = {
          ok: false,
          integrity: [err.message],
          foreignKeys: [],
          artifacts: { checked: 0, missing: [], corrupt: [] },
        };
      }
      const restore = t('cli.checkRestore', {
        dbPath: location.dbPath,
        backups: join(location.dataDir, 'backups'),
      });
      if (opts.json) printJson(io, r.integrity.length ? { ...r, restore } : r);
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
        for (const line of r.integrity.slice(0, 20))
          io.stdout(`  ${t('cli.checkDamage', { line })}\n`);
        // the files by name, as the Settings page lists them
        for (const f of r.artifacts.files?.slice(0, 20) ?? [])
          io.stdout(
            `  ${t(`pages.settings.fileProblem.${f.problem}`, { kind: t(`pages.settings.artifactKind.${f.kind}`, { defaultValue: f.kind }) })}${t('common.colon')}${f.path}\n`,
          );
        const bad = r.artifacts.missing.length + r.artifacts.corrupt.length;
        if (bad > 20) io.stdout(`  ${t('common.more', { count: bad - 20 })}\n`);
        if (r.integrity.length) io.stdout(`${restore}\n`);
      }
      if (!r.ok) throw new ExitWith(EXIT.failed);
    });
}
