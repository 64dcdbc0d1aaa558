import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { ProfileCompare, ProfileResult } from '../../../shared/stages/profiling/api';
import { AmwError } from '../../../shared/errors';
import { textIn } from '../../core/i18n';
import { profileDocument } from '../../core/stages/profiling/cli';
import { importProfile } from '../../core/stages/profiling/import';
import { compareProfiles } from '../../core/stages/profiling/compare';
import { printJson, type CommandEnv } from '../io';
import type { Configure } from '../program';
import { awaitJob, passwordFrom, withCore } from './with-core';

const us = (x: number | null) => (x === null ? '-' : Math.round(x).toLocaleString('en-US'));
const pc = (x: number) => `${(x * 100).toFixed(1)}%`;

/**
 * `amw profile gather HOST[,HOST…] DIR [--session ID] [--json]`: every host's DIR (the rank folders
 * that node wrote) over SFTP into the data dir, read as one import; missing ranks are warnings.
 * `amw profile import DIR [--session ID | --store] [--json]`: reads torch_npu.profiler, msprof or
 * msprof-analyze output (any mix, any depth) and prints where the step goes and what to do.
 * `amw profile compare A B [--json]`: A and B are folders or stored profiling runs (their ids).
 */
export function registerProfileCommand(
  program: Command,
  env: CommandEnv,
  configure: Configure,
): void {
  const { t, io, global } = env;
  const show = textIn(global.lang);
  const k = (key: string) => t(`stage-profiling:cli.${key}`);
  const profile = configure(program.command('profile')).description(k('profile'));

  configure(profile.command('import'))
    .description(k('import'))
    .argument('<dir>', k('dir'))
    .option('--session <id>', k('session'))
    .option('--store', k('store'))
    .option('--json', t('cli.opt.json'))
    .action(async (dir: string, o: { session?: string; store?: boolean; json?: boolean }) => {
      const abs = resolve(dir);
      let r: ProfileResult;
      if (o.session || o.store) {
        const sessionId = o.session ? Number(o.session) : undefined;
        if (o.session && !(Number.isInteger(sessionId) && sessionId! > 0))
          throw new AmwError(
            'VALIDATION',
            `--session takes a session id (a number), not ${o.session}.`,
          );
        r = await withCore(env, async (core) => {
          const started = await core.call('profiling.import', { dir: abs, sessionId });
          await awaitJob(env, core, started.jobId);
          const got = await core.call('profiling.get', { stageRunId: started.stageRunId });
          io.stderr(`session ${started.sessionId}, run ${started.stageRunId}\n`);
          return got;
        });
      } else r = await importProfile(abs);
      if (o.json) return printJson(io, profileDocument(r, show));
      printProfile(r);
    });

  configure(profile.command('gather'))
    .description(k('gather'))
    .argument('<hosts>', k('hosts'))
    .argument('<dir>', k('remoteDir'))
    .option('--session <id>', k('session'))
    .option('--json', t('cli.opt.json'))
    .option('--password-stdin', t('cli.opt.passwordStdin'))
    .action(
      async (
        hosts: string,
        dir: string,
        o: { session?: string; json?: boolean; passwordStdin?: boolean },
      ) => {
        const password = await passwordFrom(env, o);
        const r = await withCore(env, async (core) => {
          const started = await core.call('profiling.gather', {
            hosts: hosts
              .split(',')
              .map((h) => h.trim())
              .filter(Boolean),
            dir,
            sessionId: o.session ? Number(o.session) : undefined,
            password,
          });
          await awaitJob(env, core, started.jobId, !o.json);
          io.stderr(`session ${started.sessionId}, run ${started.stageRunId}\n`);
          return core.call('profiling.get', { stageRunId: started.stageRunId });
        });
        if (o.json) return printJson(io, profileDocument(r, show));
        printProfile(r);
      },
    );

  configure(profile.command('compare'))
    .description(k('compare'))
    .argument('<a>')
    .argument('<b>')
    .option('--json', t('cli.opt.json'))
    .action(async (a: string, b: string, o: { json?: boolean }) => {
      const isDir = (x: string) => existsSync(x) && statSync(x).isDirectory();
      const runId = (x: string) => {
        const n = Number(x);
        if (!Number.isInteger(n) || n <= 0)
          throw new AmwError('NOT_FOUND', `${x} is neither a folder nor a stored run id.`, {
            arg: x,
          });
        return n;
      };
      let cmp: ProfileCompare;
      if (isDir(a) && isDir(b))
        cmp = compareProfiles(await importProfile(resolve(a)), await importProfile(resolve(b)));
      else
        cmp = await withCore(env, async (core) => {
          const load = async (x: string) =>
            isDir(x)
              ? importProfile(resolve(x))
              : core.call('profiling.get', { stageRunId: runId(x) });
          return compareProfiles(await load(a), await load(b));
        });
      if (o.json) return printJson(io, cmp);
      io.stdout(`a: ${cmp.a.source} (${cmp.a.kind}) mean step ${us(cmp.a.stepUs)} µs\n`);
      io.stdout(`b: ${cmp.b.source} (${cmp.b.kind}) mean step ${us(cmp.b.stepUs)} µs\n`);
      if (cmp.stepRatio !== null) io.stdout(`step time b/a: ${cmp.stepRatio.toFixed(3)}\n`);
      for (const c of cmp.categories)
        io.stdout(`  ${c.name.padEnd(28)} ${us(c.aUs).padStart(14)} ${us(c.bUs).padStart(14)}\n`);
      for (const row of cmp.byOpType.slice(0, 20))
        io.stdout(
          `  ${row.name.slice(0, 40).padEnd(40)} ${us(row.aUs).padStart(12)} ${us(row.bUs).padStart(12)} ${row.ratio === null ? '' : `×${row.ratio.toFixed(2)}`}\n`,
        );
      io.stdout(
        `advice fixed: ${cmp.advice.fixed.join(', ') || '-'}; new: ${cmp.advice.added.join(', ') || '-'}\n`,
      );
    });

  function printProfile(r: ProfileResult) {
    io.stdout(`${r.source} (${r.kind}), ${r.ranks.length} rank folder(s)\n`);
    for (const s of r.steps)
      io.stdout(
        `  rank ${s.rank ?? '?'} step ${s.step ?? '?'}: computing ${us(s.computingUs)} µs, communication not overlapped ${us(s.communicationNotOverlappedUs)}, overlapped ${us(s.overlappedUs)}, free ${us(s.freeUs)}, bubble ${us(s.bubbleUs)}\n`,
      );
    if (r.kernels) {
      io.stdout(`kernels: ${r.kernels.count}, ${us(r.kernels.totalUs)} µs\n`);
      for (const [tt, v] of Object.entries(r.kernels.byTaskType))
        io.stdout(`  ${tt.padEnd(16)} ${us(v.us).padStart(14)} µs ${pc(v.share).padStart(7)}\n`);
      io.stdout('top:\n');
      for (const x of r.kernels.top)
        io.stdout(`  ${us(x.us).padStart(12)} µs ×${x.count}  ${x.taskType}  ${x.name}\n`);
    }
    for (const a of r.advice) {
      io.stdout(`[${a.severity}] ${a.id}: ${show(a.message)}\n`);
      io.stdout(`    → ${show(a.suggestion)}\n`);
    }
    for (const w of r.warnings)
      io.stderr(`warning: ${w.file}${w.line ? `:${w.line}` : ''}: ${show(w.message)}\n`);
  }
}
