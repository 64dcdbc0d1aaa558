import type { Command } from 'commander';
import { parseNpuSmiKeyValue } from '../../core/parsers/key-value';
import { parseNpuSmiInfo } from '../../core/parsers/npu-smi';
import { printJson, readInputFile, type CommandEnv } from '../io';
import type { Configure } from '../program';

/** npu-smi output of a large node is tens of kilobytes; this is far beyond any real one. */
export const MAX_NPU_SMI_BYTES = 16 * 1024 * 1024;

/** Default table, or `-t …` key : value output: decided by whether the text has table rows. */
export function parseNpuSmiText(text: string) {
  return /^\s*\|/m.test(text) || !/ : /.test(text)
    ? { kind: 'table' as const, ...parseNpuSmiInfo(text) }
    : { kind: 'key-value' as const, ...parseNpuSmiKeyValue(text) };
}

export function registerParseCommand(
  program: Command,
  env: CommandEnv,
  configure: Configure,
): void {
  const { t, io } = env;
  const parse = configure(program.command('parse')).description(t('cli.cmd.parse'));
  configure(parse.command('npu-smi'))
    .description(t('cli.cmd.parseNpuSmi'))
    .argument('<file>', t('cli.arg.npuSmiFile'))
    .option('--json', t('cli.opt.json'))
    .action(async (file: string, opts: { json?: boolean }) => {
      const text = await readInputFile(io, file, MAX_NPU_SMI_BYTES);
      const result = parseNpuSmiText(text);
      if (opts.json) return printJson(io, result);
      if (result.kind === 'key-value') {
        for (const block of result.blocks) {
          io.stdout(
            `${Object.entries(block)
              .map(([k, v]) => `${k}: ${v}`)
              .join('\n')}\n\n`,
          );
        }
      } else {
        if (result.error)
          io.stdout(
            `npu-smi: ${result.error.message}${result.error.meaning ? ` (${result.error.meaning})` : ''}\n`,
          );
        io.stdout(`npu-smi ${result.smiVersion ?? '?'} · ${result.devices.length} chip(s)\n`);
        for (const d of result.devices) {
          const hbm = d.hbmTotalMB === null ? '' : ` HBM ${d.hbmUsedMB ?? '?'}/${d.hbmTotalMB} MB`;
          const mem = d.memTotalMB === null ? '' : ` mem ${d.memUsedMB ?? '?'}/${d.memTotalMB} MB`;
          io.stdout(
            `  NPU ${d.npu} chip ${d.chip}  ${d.name ?? '?'}  ${d.health ?? '?'}  ${d.powerW ?? '-'} W  ${d.tempC ?? '-'} °C  AICore ${d.aicorePct ?? '-'}%${hbm}${mem}  ${d.busId ?? ''}\n`,
          );
        }
        for (const p of result.processes) {
          io.stdout(
            `  pid ${p.pid} on NPU ${p.npu} chip ${p.chip ?? '?'}: ${p.name || '(no name)'} ${p.memMB ?? '?'} MB\n`,
          );
        }
      }
      for (const w of result.warnings) io.stderr(`warning: ${w}\n`);
    });
}
