import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import type { Command } from 'commander';
import { AmwError, fromWireError } from '../../../shared/errors';
import { msg } from '../../../shared/api/text';
import type { Core } from '../../core/api/core';
import type { CommandEnv } from '../io';

export interface HostAccess {
  acceptNewHostKey?: boolean;
  passwordStdin?: boolean;
  /** The key passphrase comes from stdin (else AMW_KEY_PASSPHRASE, else only the agent). */
  passphraseStdin?: boolean;
}

/**
 * Opens the engine for one command and always closes it, whatever the command does. The CLI
 * never prompts for host keys: unknown keys are refused unless --accept-new-host-key.
 */
export async function withCore<T>(
  env: CommandEnv,
  fn: (core: Core) => Promise<T>,
  access: HostAccess = {},
): Promise<T> {
  const lazy = lazyCore(env, access);
  try {
    const core = await lazy.get();
    try {
      return await fn(core);
    } catch (err) {
      throw lazy.mapError(err);
    }
  } finally {
    await lazy.close();
  }
}

/**
 * The engine opened on first use, for a command that may not need it (a stage's command reading
 * a local folder): nothing is created in the data dir until something is stored or read there.
 * A damaged database is named as withCore() names it.
 */
export function lazyCore(
  env: CommandEnv,
  access: HostAccess = {},
): { get(): Promise<Core>; close(): Promise<void>; mapError(err: unknown): unknown } {
  let opening: Promise<Core> | null = null;
  let dbPath: string | null = null;
  return {
    get: () =>
      (opening ??= passphraseFrom(env, access).then(async (passphrase) => {
        // loaded here, not at start-up: a command that needs no store (`amw scan`) never loads
        // the engine's database, SSH and stage code
        const { createCore } = await import('../../core/api/core');
        const core = createCore({
          db: env.global.db,
          env: env.io.env,
          knownHosts: env.global.knownHosts,
          hostKeyPolicy: access.acceptNewHostKey ? 'accept-new' : 'refuse-new',
          passphrase,
        });
        dbPath = core.location.dbPath;
        return core;
      })),
    async close() {
      if (opening) await (await opening.catch(() => null))?.close();
    },
    mapError: (err) =>
      // the engine met damaged pages: say which file, as opening a damaged file does
      err instanceof AmwError && err.code === 'DB_CORRUPT' && dbPath
        ? new AmwError('DB_CORRUPT', err.message, { dbPath })
        : err,
  };
}

/** The options every command that reaches a host takes. */
export function hostAccessOptions(cmd: Command, env: CommandEnv): Command {
  return cmd
    .option('--accept-new-host-key', env.t('cli.opt.acceptNew'))
    .option('--password-stdin', env.t('cli.opt.passwordStdin'))
    .option('--passphrase-stdin', env.t('cli.opt.passphraseStdin'));
}

/**
 * The private key's passphrase: one line of stdin with --passphrase-stdin, else the
 * AMW_KEY_PASSPHRASE environment variable; never an argument (argv is visible to every user
 * through ps and /proc). Standard input carries one secret, so the password and the passphrase
 * cannot both come from it.
 */
export async function passphraseFrom(
  env: CommandEnv,
  access: HostAccess,
): Promise<string | undefined> {
  if (access.passphraseStdin && access.passwordStdin)
    throw new AmwError('VALIDATION', msg('errors.text.oneSecretOnStdin'));
  if (access.passphraseStdin) return (await env.io.readStdin()).replace(/\r?\n$/, '');
  return env.io.env.AMW_KEY_PASSPHRASE || undefined;
}

/** `--password-stdin`: the password is read once from stdin and never stored or echoed. */
export async function passwordFrom(
  env: CommandEnv,
  access: HostAccess,
): Promise<string | undefined> {
  if (!access.passwordStdin) return undefined;
  return (await env.io.readStdin()).replace(/\r?\n$/, '');
}

/**
 * Waits for a job started through the contract: its progress goes to stderr (when `progress`),
 * Ctrl+C cancels it, and a job that did not succeed throws its error.
 */
export async function awaitJob(
  env: CommandEnv,
  core: Core,
  jobId: string,
  progress = false,
): Promise<unknown> {
  const { io, t } = env;
  let last = '';
  const off = core.on('job.updated', (job) => {
    if (!progress || job.id !== jobId || !job.message) return;
    const pct = job.progress === null ? '' : ` ${Math.round(job.progress * 100)}%`;
    const line = `${t(`jobs.step.${job.message.key}`, job.message.params ?? {})}${pct}`;
    if (line !== last) io.stderr(`${line}\n`);
    last = line;
  });
  let done = false;
  void io.interrupted().then(() => {
    if (!done) core.jobs.cancel(jobId);
  });
  try {
    const job = await core.jobs.wait(jobId);
    if (job.status !== 'succeeded')
      throw fromWireError(job.error ?? { code: 'INTERNAL', message: job.status });
    return job.result;
  } finally {
    done = true;
    off();
  }
}

/**
 * Commands that only read (info, hosts list) say when the database is damaged instead of
 * showing what may be a partial picture as if it were whole: SQLite's quick_check, on a separate
 * read-only connection.
 */
export function warnIfDamaged(env: CommandEnv, dbPath: string): boolean {
  let reason: string | null = null;
  try {
    const Database = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
    const db = new Database(dbPath, { readonly: true, fileMustExist: true });
    try {
      const rows = db.pragma('quick_check(3)') as { quick_check: string }[];
      const bad = rows.map((r) => r.quick_check).filter((l) => l !== 'ok');
      if (bad.length) reason = bad.join('; ');
    } finally {
      db.close();
    }
  } catch (err) {
    reason = (err as Error).message;
  }
  if (reason) env.io.stderr(`${env.t('cli.dbDamagedWarning', { dbPath, reason })}\n`);
  return reason !== null;
}
