import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { OpsResult, StageRunRecord } from '../../../shared/api';
import { AmwError } from '../../../shared/errors';
import { EXIT, ExitWith, printJson, type CommandEnv } from '../io';
import { junitXml } from '../../core/reports/junit';
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
    .option('--entry <file:function>', t('cli.opt.entry'))
    .option('--script <file>', t('cli.opt.script'))
    .option('--backward', t('cli.opt.backward'))
    .option('--torch-npu <version>', t('cli.opt.torchNpu'))
    .action(
      async (
        host: string,
        o: HostAccess & {
          stage: string;
          project?: string;
          junit?: string;
          json?: boolean;
          entry?: string;
          script?: string;
          backward?: boolean;
          torchNpu?: string;
        },
      ) => {
        if (o.stage !== 'env' && o.stage !== 'ops') {
          throw new AmwError(
            'VALIDATION',
            `The env and ops stages can run in this build (asked: ${o.stage}).`,
            { stage: o.stage },
          );
        }
        const stage = o.stage;
        const password = await passwordFrom(env, o);
        let ops: OpsResult | null = null;
        const run = (await withCore(
          env,
          async (core) => {
            const started = await core.call('stages.run', {
              host,
              stage,
              project: o.project,
              password,
              ...(stage === 'ops'
                ? {
                    entry: o.entry,
                    script: o.script,
                    backward: o.backward,
                    torchNpu: o.torchNpu,
                  }
                : {}),
            });
            const record = (await awaitJob(env, core, started.jobId)) as StageRunRecord;
            if (stage === 'ops')
              ops = await core
                .call('ops.get', { stageRunId: started.stageRunId })
                .catch(() => null);
            return record;
          },
          o,
        )) as StageRunRecord;
        const lang = global.lang;
        if (stage === 'ops' && o.json) {
          const r = ops as OpsResult | null;
          printJson(io, {
            session: run.sessionId,
            stage: 'ops',
            host: run.host,
            status: run.status,
            targetTorchNpu: r?.targetTorchNpu ?? null,
            opList: r?.opList ?? null,
            breakdown: r?.breakdown ?? null,
            ops: (r?.ops ?? []).map((x) => ({
              op: x.op,
              overload: x.overload,
              count: x.count,
              shapes: x.shapes,
              dtypes: x.dtypes,
              class: x.class,
              dynamic: x.dynamic,
              modules: x.modules,
              sources: x.sources.map((src) => src.at),
              ...(x.replacement ? { replacement: x.replacement } : {}),
              reason: x.reason,
            })),
            variableInputs: r?.variableInputs ?? [],
            error: r?.error ?? null,
            checks: run.checks.map((c) => ({
              id: c.id,
              status: c.status,
              summary: c.summary[lang],
            })),
          });
          if (run.status === 'fail') throw new ExitWith(EXIT.failed);
          if (run.status === 'error') throw new ExitWith(EXIT.error);
          return;
        }
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
