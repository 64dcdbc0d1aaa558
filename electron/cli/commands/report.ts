import { readFileSync, writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { REPORT_FORMATS, type ReportFormat } from '../../../shared/api';
import { AmwError } from '../../../shared/errors';
import { msg } from '../../../shared/api/text';
import { printJson, type CommandEnv } from '../io';
import type { Configure } from '../program';
import { withCore } from './with-core';

export function registerReportCommand(
  program: Command,
  env: CommandEnv,
  configure: Configure,
): void {
  const { t, io, global } = env;
  configure(program.command('report'))
    .description(t('cli.cmd.report'))
    .argument('[session]', t('cli.arg.session'))
    .option('--format <format>', t('cli.opt.format'), 'html')
    .option('--out <file>', t('cli.opt.reportOut'))
    .option('--hide-names', t('cli.opt.hideNames'))
    .option('--import <file>', t('cli.opt.importReport'))
    .action(
      async (
        session: string | undefined,
        o: { format: string; out?: string; hideNames?: boolean; import?: string },
      ) => {
        if (o.import) {
          const imported = await withCore(env, async (core) =>
            core.call('reports.import', { json: readFileSync(o.import!, 'utf8') }),
          );
          printJson(io, imported);
          return;
        }
        const sessionId = Number(session);
        if (!Number.isInteger(sessionId) || sessionId <= 0)
          throw new AmwError(
            'VALIDATION',
            msg('errors.text.reportSessionId', { value: session ?? '—' }),
          );
        if (!(REPORT_FORMATS as readonly string[]).includes(o.format))
          throw new AmwError(
            'VALIDATION',
            msg('errors.text.reportFormat', { formats: REPORT_FORMATS.join(', ') }),
          );
        const out = await withCore(env, async (core) =>
          core.call('reports.export', {
            source: { sessionId },
            format: o.format as ReportFormat,
            language: global.lang,
            hideNames: !!o.hideNames,
          }),
        );
        const file = o.out ?? out.fileName;
        writeFileSync(
          file,
          out.base64 !== undefined ? Buffer.from(out.base64, 'base64') : out.text!,
        );
        io.stderr(`${t('cli.reportWritten', { file })}\n`);
      },
    );
}
