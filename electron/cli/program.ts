import { Command, CommanderError, type Help, Option } from 'commander';
import { Language } from '../../shared/api/common';
import { DOCTOR_RULES_NS } from '../../shared/api/doctor';
import { explainError, languageFromLocale, type Translate } from '../../shared/i18n';
import { engineTranslator } from '../core/i18n';
import { AmwError, toWireError } from '../../shared/errors';
import { appVersion } from '../core/paths';
import { EXIT, ExitWith, printableIO, type CliIO, type CommandEnv, type GlobalOptions } from './io';

type Register = (program: Command, env: CommandEnv, configure: Configure) => void;

/**
 * Every command, its module loaded when it is registered: `amw scan` loads the scanner only,
 * not the database, SSH, report and stage code every other command registers (a quarter of a
 * one-shot scan's start-up). In the order `amw --help` lists them.
 */
async function commandRegistrations(only: string | undefined): Promise<Register[]> {
  if (only === 'scan') return [(await import('./commands/scan')).registerScanCommand];
  const [
    db,
    doctor,
    info,
    jobs,
    parse,
    run,
    scan,
    report,
    hosts,
    serve,
    exportMetrics,
    settings,
    stages,
  ] = await Promise.all([
    import('./commands/db'),
    import('./commands/doctor'),
    import('./commands/info'),
    import('./commands/jobs'),
    import('./commands/parse'),
    import('./commands/run'),
    import('./commands/scan'),
    import('./commands/report'),
    import('./commands/hosts'),
    import('./commands/serve'),
    import('./commands/export-metrics'),
    import('./commands/settings'),
    import('./commands/stage-commands'),
  ]);
  return [
    info.registerInfoCommand,
    serve.registerServeCommand,
    exportMetrics.registerExportMetricsCommand,
    settings.registerSettingsCommands,
    jobs.registerJobsCommand,
    db.registerDbCommands,
    parse.registerParseCommand,
    hosts.registerHostsCommands,
    hosts.registerInventoryCommand,
    run.registerRunCommand,
    scan.registerScanCommand,
    report.registerReportCommand,
    doctor.registerDoctorCommand,
    stages.registerStageCommands,
  ];
}

/** The command the arguments name (past the global options), if any. */
export function commandName(argv: string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--db' || a === '--known-hosts' || a === '--lang') i++;
    else if (!a.startsWith('-')) return a;
  }
  return undefined;
}

/** The language is needed before commander parses (help text), so read it from argv/env first. */
export function pickLanguage(argv: string[], env: NodeJS.ProcessEnv): Language {
  const i = argv.findIndex((a) => a === '--lang' || a.startsWith('--lang='));
  const fromArgv =
    i < 0 ? undefined : argv[i]!.includes('=') ? argv[i]!.split('=')[1] : argv[i + 1];
  const parsed = Language.safeParse(fromArgv ?? env.AMW_LANG);
  if (parsed.success) return parsed.data;
  return languageFromLocale(env.LC_ALL || env.LC_MESSAGES || env.LANG);
}

function localisedHelp(t: Translate): Partial<Help> {
  const titles: Record<string, string> = {
    'Usage:': t('cli.titles.usage'),
    'Options:': t('cli.titles.options'),
    'Commands:': t('cli.titles.commands'),
    'Arguments:': t('cli.titles.arguments'),
    'Global Options:': t('cli.titles.options'),
  };
  return { styleTitle: (title: string) => titles[title] ?? title };
}

export async function buildProgram(
  io: CliIO,
  lang: Language,
  argv: string[] = [],
): Promise<{ program: Command; env: CommandEnv }> {
  const t = engineTranslator(lang);
  const global: GlobalOptions = { lang };
  const env: CommandEnv = { io, t, global };
  const program = new Command('amw');
  program
    .description(t('cli.description'))
    .version(appVersion(), '-V, --version', t('cli.opt.version'))
    .helpOption('-h, --help', t('cli.opt.help'))
    .helpCommand('help [command]', t('cli.cmd.help'))
    .configureHelp(localisedHelp(t))
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .exitOverride()
    .showHelpAfterError(t('cli.usageHint'))
    .option('--db <path>', t('cli.opt.db'))
    .option('--known-hosts <path>', t('cli.opt.knownHosts'))
    .addOption(new Option('--lang <lang>', t('cli.opt.lang')).choices(['zh-CN', 'en']))
    .hook('preAction', (cmd) => {
      const opts = cmd.opts<{ db?: string; knownHosts?: string }>();
      global.db = opts.db ?? io.env.AMW_DB;
      global.knownHosts = opts.knownHosts ?? io.env.AMW_KNOWN_HOSTS;
    });

  // Every sub-command shares the localised help and the exit override.
  const configure = (cmd: Command) =>
    cmd
      .helpOption('-h, --help', t('cli.opt.help'))
      .configureHelp(localisedHelp(t))
      .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
      .exitOverride()
      .showHelpAfterError(t('cli.usageHint'));

  for (const register of await commandRegistrations(commandName(argv)))
    register(program, env, configure);
  return { program, env };
}

export type Configure = (cmd: Command) => Command;

/** Runs the CLI and returns its exit code; never calls process.exit itself. */
export async function runCli(argv: string[], rawIO: CliIO): Promise<number> {
  const io = printableIO(rawIO);
  const lang = pickLanguage(argv, io.env);
  const { program, env } = await buildProgram(io, lang, argv);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return EXIT.ok;
  } catch (err) {
    if (err instanceof ExitWith) return err.code;
    if (err instanceof CommanderError) {
      // --help and --version end through here too, with exit code 0
      return err.exitCode === 0 ? EXIT.ok : EXIT.error;
    }
    reportError(env.t, io, err, lang);
    return EXIT.error;
  }
}

export function reportError(t: Translate, io: CliIO, err: unknown, lang: Language = 'en'): void {
  const wire = toWireError(err);
  io.stderr(`amw: ${explainError(t, wire, lang)}\n`);
  // what the error doctor recognised in the failure: its cause and fix, one line each
  const diagnosis = (wire.detail as { diagnosis?: { rule: string }[] } | undefined)?.diagnosis;
  for (const d of Array.isArray(diagnosis) ? diagnosis : [])
    io.stderr(
      `  → ${t(`${DOCTOR_RULES_NS}:${d.rule}.title`)}: ${t(`${DOCTOR_RULES_NS}:${d.rule}.fix`)}\n`,
    );
  if (!(err instanceof AmwError) && err instanceof Error && io.env.AMW_DEBUG) {
    io.stderr(`${err.stack ?? ''}\n`);
  }
}
