import type { Command } from 'commander';
import type { HostSummary, Inventory } from '../../../shared/api';
import { fromWireError } from '../../../shared/errors';
import { EXIT, ExitWith, printJson, type CommandEnv } from '../io';
import type { Configure } from '../program';
import {
  awaitJob,
  hostAccessOptions,
  passwordFrom,
  warnIfDamaged,
  withCore,
  type HostAccess,
} from './with-core';

const summaryLine = (h: HostSummary) => {
  const inv = h.inventory;
  const where = `${h.username ? `${h.username}@` : ''}${h.hostname}:${h.port}${h.jump ? ` via ${h.jump}` : ''}`;
  const chips = inv
    ? `${inv.chipCount ? `${inv.chipCount}× ${inv.chip ?? '?'}` : 'no NPU'} ${inv.health ?? ''}  CANN ${inv.cann ?? '-'}  driver ${inv.driver ?? '-'}  torch_npu ${inv.torchNpu ?? '-'}`
    : '(no inventory yet)';
  return `${h.name.padEnd(16)} ${where.padEnd(32)} ${chips}`;
};

export function registerHostsCommands(
  program: Command,
  env: CommandEnv,
  configure: Configure,
): void {
  const { t, io } = env;
  const hosts = configure(program.command('hosts')).description(t('cli.cmd.hosts'));

  hostAccessOptions(configure(hosts.command('add')), env)
    .description(t('cli.cmd.hostsAdd'))
    .argument('<name>')
    .requiredOption('--host <address>', t('cli.opt.host'))
    .option('--port <n>', t('cli.opt.sshPort'), '22')
    .option('--user <user>', t('cli.opt.user'))
    .option('--identity <file>', t('cli.opt.identity'))
    .option('--jump <name>', t('cli.opt.jump'))
    .option('--group <group>', t('cli.opt.group'))
    .option('--tag <tag...>', t('cli.opt.tag'))
    .option('--json', t('cli.opt.json'))
    .action(
      async (
        name: string,
        o: HostAccess & {
          host: string;
          port: string;
          user?: string;
          identity?: string;
          jump?: string;
          group?: string;
          tag?: string[];
          json?: boolean;
        },
      ) => {
        // --password-stdin: the password is read once and used to log in right away (the CLI
        // never stores it), so a wrong one is said now rather than at the first inventory
        const password = await passwordFrom(env, o);
        const { host, test } = await withCore(
          env,
          async (core) => {
            const added = await core.call('hosts.add', {
              name,
              hostname: o.host,
              port: Number(o.port),
              username: o.user ?? null,
              identityFile: o.identity ?? null,
              jump: o.jump ?? null,
              group: o.group ?? null,
              tags: o.tag ?? [],
            });
            const tried =
              password !== undefined || o.passphraseStdin
                ? await core.call('hosts.test', { name: added.name, password })
                : null;
            return { host: added, test: tried };
          },
          o,
        );
        if (o.json) printJson(io, test ? { ...host, test } : host);
        else io.stdout(`${t('cli.hostAdded', { name: host.name })}\n`);
        if (test?.ok && !o.json)
          io.stdout(
            `${t('cli.testOk', { name, ms: test.latencyMs, system: test.system ?? '' })}\n`,
          );
        if (test && !test.ok) {
          io.stderr(`${t('cli.hostAddedLoginFailed', { name: host.name })}\n`);
          if (!o.json) throw fromWireError(test.error!);
          throw new ExitWith(EXIT.error);
        }
      },
    );

  configure(hosts.command('list'))
    .description(t('cli.cmd.hostsList'))
    .option('--group <group>', t('cli.opt.group'))
    .option('--json', t('cli.opt.json'))
    .action(async (o: { group?: string; json?: boolean }) => {
      const list = await withCore(env, async (core) => {
        const l = await core.call('hosts.list', { group: o.group });
        warnIfDamaged(env, core.location.dbPath);
        return l;
      });
      if (o.json) return printJson(io, list);
      if (!list.length) return io.stdout(`${t('cli.noHosts')}\n`);
      for (const h of list) io.stdout(`${summaryLine(h)}\n`);
    });

  configure(hosts.command('show'))
    .description(t('cli.cmd.hostsShow'))
    .argument('<name>')
    .option('--json', t('cli.opt.json'))
    .action(async (name: string, o: { json?: boolean }) => {
      const h = await withCore(env, (core) => core.call('hosts.get', { name }));
      if (o.json) return printJson(io, h);
      io.stdout(`${summaryLine(h)}\n`);
    });

  configure(hosts.command('remove'))
    .description(t('cli.cmd.hostsRemove'))
    .argument('<name>')
    .action(async (name: string) => {
      await withCore(env, (core) => core.call('hosts.remove', { name }));
      io.stdout(`${t('cli.hostRemoved', { name })}\n`);
    });

  configure(hosts.command('import-ssh-config'))
    .description(t('cli.cmd.hostsImport'))
    .argument('[file]')
    .option('--only <alias...>', t('cli.opt.only'))
    .option('--dry-run', t('cli.opt.dryRun'))
    .option('--json', t('cli.opt.json'))
    .action(
      async (
        file: string | undefined,
        o: { only?: string[]; dryRun?: boolean; json?: boolean },
      ) => {
        const r = await withCore(env, (core) =>
          core.call('hosts.importSshConfig', { file, names: o.only, dryRun: o.dryRun }),
        );
        if (o.json) return printJson(io, r);
        if (r.missing) {
          io.stderr(`amw: ${t('hosts.import.missingCli', { path: r.missing })}\n`);
          throw new ExitWith(EXIT.error);
        }
        if (o.dryRun)
          for (const c of r.candidates)
            io.stdout(
              `  ${c.name}  ${c.username ? `${c.username}@` : ''}${c.hostname}:${c.port ?? 22}${c.jump ? ` via ${c.jump}` : ''}\n`,
            );
        io.stdout(
          `${t('cli.imported', { added: r.added.length, updated: r.updated.length, skipped: r.skipped.length })}\n`,
        );
        for (const s of r.skipped) io.stderr(`  ${s.name}: ${s.reason}\n`);
        for (const w of r.warnings ?? []) io.stderr(`warning: ${w}\n`);
      },
    );

  hostAccessOptions(configure(hosts.command('test')), env)
    .description(t('cli.cmd.hostsTest'))
    .argument('<name>')
    .option('--json', t('cli.opt.json'))
    .action(async (name: string, o: HostAccess & { json?: boolean }) => {
      const password = await passwordFrom(env, o);
      const r = await withCore(env, (core) => core.call('hosts.test', { name, password }), o);
      if (o.json) printJson(io, r);
      else if (r.ok)
        io.stdout(`${t('cli.testOk', { name, ms: r.latencyMs, system: r.system ?? '' })}\n`);
      if (!r.ok) {
        if (!o.json) throw fromWireError(r.error!);
        throw new ExitWith(EXIT.error);
      }
    });
}

export function registerInventoryCommand(
  program: Command,
  env: CommandEnv,
  configure: Configure,
): void {
  const { t, io } = env;
  hostAccessOptions(configure(program.command('inventory')), env)
    .description(t('cli.cmd.inventory'))
    .argument('<name>')
    .option('--json', t('cli.opt.json'))
    .action(async (name: string, o: HostAccess & { json?: boolean }) => {
      const password = await passwordFrom(env, o);
      const result = (await withCore(
        env,
        async (core) =>
          awaitJob(env, core, (await core.call('inventory.take', { name, password })).jobId),
        o,
      )) as { inventory: Inventory };
      if (o.json) return printJson(io, result.inventory);
      printInventory(env, result.inventory);
    });
}

function printInventory(env: CommandEnv, inv: Inventory): void {
  const { io } = env;
  const v = inv.versions;
  const lines = [
    `${inv.host}  ${inv.os ?? '?'}  ${inv.kernel ?? ''} ${inv.arch ?? ''}`,
    `  CPU ${inv.cpu.model ?? '?'} × ${inv.cpu.cores ?? '?'}   memory ${inv.memoryMB ?? '?'} MB`,
    `  CANN ${v.cann ?? '-'}  driver ${v.driver ?? '-'}  firmware ${v.firmware ?? '-'}  python ${v.python ?? '-'}  torch ${v.torch ?? '-'}  torch_npu ${v.torchNpu ?? '-'}`,
  ];
  if (!inv.npu) lines.push('  npu-smi: not found');
  else {
    if (inv.npu.error)
      lines.push(
        `  npu-smi: ${inv.npu.error.message}${inv.npu.error.meaning ? ` (${inv.npu.error.meaning})` : ''}`,
      );
    for (const d of inv.npu.devices) {
      const hbm = d.hbmTotalMB === null ? '' : ` HBM ${d.hbmUsedMB ?? '?'}/${d.hbmTotalMB} MB`;
      lines.push(
        `  NPU ${d.npu}.${d.chip} ${d.name ?? '?'} ${d.health ?? '?'} ${d.tempC ?? '-'}°C AICore ${d.aicorePct ?? '-'}%${hbm}`,
      );
    }
  }
  for (const n of inv.notes) lines.push(`  note: ${n}`);
  io.stdout(`${lines.join('\n')}\n`);
  for (const w of inv.warnings) io.stderr(`warning: ${w}\n`);
}
