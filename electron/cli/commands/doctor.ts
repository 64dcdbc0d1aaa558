import { Readable } from 'node:stream';
import type { Command } from 'commander';
import type { DoctorMatch, DoctorProof, DoctorResult } from '../../../shared/api';
import type { Translate } from '../../../shared/i18n';
import { diagnosePath } from '../../core/doctor/diagnose';
import { stageNs } from '../../../shared/stages';
import { EXIT, ExitWith, printJson, type CommandEnv } from '../io';
import type { Configure } from '../program';

const clip = (s: string, n = 240) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

export function proofText(t: Translate, p: DoctorProof): string {
  const parts: string[] = [];
  if (p.stage)
    parts.push(
      t('doctor.proofStage', { stage: t(`${stageNs(p.stage)}:name`, { defaultValue: p.stage }) }),
    );
  if (p.check) parts.push(t('doctor.proofCheck', { check: p.check }));
  if (p.command) parts.push(t('doctor.proofCommand', { command: p.command }));
  return parts.join(' · ');
}

function printMatch(env: CommandEnv, m: DoctorMatch, i: number) {
  const { io, t } = env;
  const where = `${m.file ? `${m.file}:` : ''}${t('doctor.line', { line: m.line })}`;
  io.stdout(
    `${i + 1}. [${t(`doctor.severity.${m.severity}`)}] ${t(`doctor.category.${m.category}`)} · ${m.title} (${m.rule}) — ${where}\n`,
  );
  io.stdout(`   > ${clip(m.text)}\n`);
  const line = (label: string, value: string) =>
    io.stdout(`   ${label}${t('common.colon')}${value}\n`);
  line(t('doctor.cause'), m.cause);
  line(t('doctor.fix'), m.fix);
  const proof = proofText(t, m.proof);
  if (proof) line(t('doctor.cli.next'), proof);
}

export function printDiagnosis(env: CommandEnv, r: DoctorResult): void {
  const { io, t } = env;
  if (!r.matches.length)
    io.stdout(
      `${r.unmatched.length ? t('doctor.noMatchesButUnknown', { count: r.unmatched.length }) : t('doctor.noMatches')}\n`,
    );
  r.matches.forEach((m, i) => printMatch(env, m, i));
  if (r.unmatched.length) {
    io.stdout(`\n${t('doctor.cli.unknownHeader')}\n`);
    for (const u of r.unmatched)
      io.stdout(`   ${u.file ? `${u.file}:` : ''}${u.line}: ${clip(u.text)}\n`);
  }
  for (const n of r.notices) io.stderr(`${t(n.key, n.params)}\n`);
  io.stderr(
    `${t('doctor.cli.stats', { lines: r.stats.lines, files: r.stats.files, ms: r.stats.elapsedMs })}\n`,
  );
}

/** `amw doctor [FILE|DIR|-]`: exit 0 nothing wrong found, 1 a known error found, 2 unreadable/no logs. */
export function registerDoctorCommand(
  program: Command,
  env: CommandEnv,
  configure: Configure,
): void {
  const { t, io } = env;
  configure(program.command('doctor'))
    .description(t('doctor.cli.description'))
    .argument('[path]', t('doctor.cli.arg'), '-')
    .option('--json', t('cli.opt.json'))
    .action(async (path: string, opts: { json?: boolean }) => {
      const raw = path === '-' ? io.stdinStream?.() : undefined;
      if (raw && (raw as { isTTY?: boolean }).isTTY) {
        // nothing piped in: waiting for a terminal to type a log would look like a hang
        io.stderr(`amw: ${t('doctor.cli.noInput')}\n`);
        throw new ExitWith(EXIT.error);
      }
      const stdin =
        path === '-'
          ? raw
            ? Readable.from(raw)
            : Readable.from([Buffer.from(await io.readStdin())])
          : undefined;
      const result = await diagnosePath(path, env.global.lang, { stdin });
      const noLogs = result.notices.some((n) => n.key === 'doctor.notice.noLogs');
      if (noLogs && !opts.json) {
        io.stderr(`amw: ${t('doctor.notice.noLogs', { path })}\n`);
        throw new ExitWith(EXIT.error);
      }
      if (opts.json)
        printJson(io, {
          matches: result.matches,
          unmatched: result.unmatched,
          notices: result.notices,
          stats: result.stats,
        });
      else printDiagnosis(env, result);
      if (noLogs) throw new ExitWith(EXIT.error);
      if (result.matches.some((m) => m.severity === 'error')) throw new ExitWith(EXIT.failed);
    });
}
