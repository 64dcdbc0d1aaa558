import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { StageRunRecord } from '../../../shared/api';
import { AmwError } from '../../../shared/errors';
import { EXIT, ExitWith, printJson, type CommandEnv } from '../io';
import { junitXml } from '../junit';
import type { Configure } from '../program';
import { awaitJob, hostAccessOptions, passwordFrom, withCore, type HostAccess } from './with-core';

const MARK: Record<string, string> = { pass: '✓', warn: '!', fail: '✗', skip: '-', error: '?' };

export function registerRunCommand(program: Command, env: CommandEnv, configure: Configure): void {
  const { t, io, global } = env;
  hostAccessOptions(configure(program.command('run')), env)
    .description(t('cli.cmd.run'))
    .argument('<host>')
    .requiredOption('--stage <stage>', t('cli.opt.stage'))
    .option('--project <name>', t('cli.opt.project'))
    .option('--junit <file>', t('cli.opt.junit'))
    .option('--json', t('cli.opt.json'))
    .action(
      async (
        host: string,
        o: HostAccess & { stage: string; project?: string; junit?: string; json?: boolean },
      ) => {
        if (o.stage !== 'env') {
          throw new AmwError(
            'VALIDATION',
            `Only the env stage can run in this build (asked: ${o.stage}).`,
            { stage: o.stage },
          );
        }
        const password = await passwordFrom(env, o);
        const run = (await withCore(
          env,
          async (core) =>
            awaitJob(
              env,
              core,
              (await core.call('stages.run', { host, stage: 'env', project: o.project, password }))
                .jobId,
            ),
          o,
        )) as StageRunRecord;
        const lang = global.lang;
        if (o.junit)
          writeFileSync(o.junit, junitXml(`amw.${run.stage}.${run.host}`, run.checks, lang));
        if (o.json) {
          printJson(io, {
            session: run.sessionId,
            stage: run.stage,
            host: run.host,
            status: run.status,
            checks: run.checks.map((c) => ({
              id: c.id,
              title: c.title[lang],
              status: c.status,
              summary: c.summary[lang],
              evidence: c.evidence,
              remediation: c.remediation ? c.remediation[lang] : null,
              ...(c.waiver ? { waiver: c.waiver } : {}),
            })),
          });
        } else {
          io.stdout(`${run.stage} @ ${run.host}: ${run.status}  (session ${run.sessionId})\n`);
          for (const c of run.checks) {
            io.stdout(`  ${MARK[c.status] ?? '?'} ${c.id.padEnd(24)} ${c.summary[lang]}\n`);
            if (c.remediation && (c.status === 'fail' || c.status === 'warn'))
              io.stdout(`      → ${c.remediation[lang].replace(/\n/g, '\n        ')}\n`);
          }
        }
        if (run.status === 'fail') throw new ExitWith(EXIT.failed);
        if (run.status === 'error') throw new ExitWith(EXIT.error);
      },
    );
}
