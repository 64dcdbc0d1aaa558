import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { StageRunRecord } from '../../../shared/api';
import { AmwError } from '../../../shared/errors';
import { EXIT, ExitWith, printJson, type CommandEnv } from '../io';
import { junitXml } from '../../core/reports/junit';
import { engineTranslator, textIn } from '../../core/i18n';
import { STAGE_DEFINITIONS, stageDefinition } from '../../core/stages/registry';
import type { StageJson } from '../../core/stages/define';
import type { Configure } from '../program';
import { awaitJob, hostAccessOptions, passwordFrom, withCore, type HostAccess } from './with-core';

const MARK: Record<string, string> = { pass: '✓', warn: '!', fail: '✗', skip: '-', error: '?' };
const RANK: Record<string, number> = { pass: 0, warn: 1, fail: 2, error: 3 };

/**
 * `amw run [HOST] --stage S[,S…]`: each stage through `stages.run` (the same door as the app),
 * in the order given, in one session. Stage options and `--json` documents come from the
 * stages' definitions; nothing here names a stage.
 */
export function registerRunCommand(program: Command, env: CommandEnv, configure: Configure): void {
  const { t, io, global } = env;
  const cmd = hostAccessOptions(configure(program.command('run')), env)
    .description(t('cli.cmd.run'))
    .argument('[host]')
    .requiredOption('--stage <stage>', t('cli.opt.stage'))
    .option('--project <name>', t('cli.opt.project'))
    .option('--session <id>', t('cli.opt.session'))
    .option('--junit <file>', t('cli.opt.junit'))
    .option('--json', t('cli.opt.json'));
  // stages share an option only when they mean the same by it (same flags); the same name
  // with another meaning is a mistake in a stage definition, refused here so a test catches it
  const seen = new Map<string, string>();
  for (const d of STAGE_DEFINITIONS)
    for (const o of d.cli?.options ?? []) {
      const name = o.flags.split(/[ ,]/)[0]!;
      const before = seen.get(name);
      if (before === undefined) {
        seen.set(name, o.flags);
        cmd.option(o.flags, t(o.help));
      } else if (before !== o.flags)
        throw new Error(
          `amw run ${name}: two stages define it differently (${before}, ${o.flags})`,
        );
    }
  cmd.action(
    async (
      host: string | undefined,
      o: HostAccess & {
        stage: string;
        project?: string;
        session?: string;
        junit?: string;
        json?: boolean;
      } & Record<string, unknown>,
    ) => {
      const ids = o.stage.split(',').map((s) => s.trim());
      const unknown = ids.filter((id) => !stageDefinition(id));
      if (unknown.length)
        throw new AmwError(
          'VALIDATION',
          t('cli.run.unknownStage', {
            stage: unknown.join(', '),
            built: STAGE_DEFINITIONS.map((d) => d.shared.id).join(', '),
          }),
          { stage: o.stage },
        );
      const password = await passwordFrom(env, o);
      const show = textIn(global.lang);
      const word = engineTranslator(global.lang);
      const docs: object[] = [];
      const runs: StageRunRecord[] = [];
      await withCore(
        env,
        async (core) => {
          let sessionId = o.session ? Number(o.session) : undefined;
          for (const id of ids) {
            const def = stageDefinition(id)!;
            const hostField =
              def.shared.runsOn === 'host'
                ? { host }
                : def.shared.runsOn === 'hosts'
                  ? { hosts: host?.split(',') }
                  : {};
            const started = await core.call('stages.run', {
              stage: id,
              ...hostField,
              sessionId,
              project: sessionId ? undefined : o.project,
              password,
              ...(def.cli?.input(o) ?? {}),
            } as never);
            sessionId = started.sessionId;
            await awaitJob(env, core, started.jobId);
            const record = await core.call('stages.get', { id: started.stageRunId });
            runs.push(record);
            const doc: StageJson = {
              session: record.sessionId,
              stage: record.stage,
              host: record.host,
              status: record.status,
              checks: record.checks.map((c) => ({
                id: c.id,
                title: show(c.title),
                status: c.status,
                summary: show(c.summary),
                evidence: c.evidence,
                remediation: c.remediation ? show(c.remediation) : null,
                ...(c.waiver ? { waiver: c.waiver } : {}),
              })),
            };
            docs.push(
              def.cli?.json
                ? await def.cli.json(doc, (m, i) => core.call(m, i), started.stageRunId, show)
                : doc,
            );
          }
        },
        o,
      );
      if (o.junit)
        writeFileSync(
          o.junit,
          junitXml(
            runs.map((r) => `amw.${r.stage}.${r.host}`).join('+'),
            runs.flatMap((r) => r.checks),
            global.lang,
          ),
        );
      if (o.json) printJson(io, docs.length === 1 ? docs[0] : docs);
      else
        for (const run of runs) {
          io.stdout(
            `${run.stage} @ ${run.host}: ${word(`sessions.status.${run.status}`)}  (${word('cli.sessionRef', { id: run.sessionId })})\n`,
          );
          for (const c of run.checks) {
            io.stdout(`  ${MARK[c.status] ?? '?'} ${c.id.padEnd(24)} ${show(c.summary)}\n`);
            if (c.remediation && (c.status === 'fail' || c.status === 'warn'))
              io.stdout(`      → ${show(c.remediation).replace(/\n/g, '\n        ')}\n`);
          }
        }
      const worst = runs.reduce((w, r) => Math.max(w, RANK[r.status] ?? 3), 0);
      if (worst === 3) throw new ExitWith(EXIT.error);
      if (worst === 2) throw new ExitWith(EXIT.failed);
    },
  );
}
