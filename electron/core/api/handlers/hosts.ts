import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { msg, type Text } from '../../../../shared/api/text';
import type { Inventory } from '../../../../shared/api';
import { diffJson } from '../../hosts/diff';
import { importSshConfig } from '../../hosts/import-ssh-config';
import type { DomainHandlers, MethodsOf, Services } from '../services';
import { STAGE_DEFINITIONS } from '../../stages/registry';
import { nameHasHistory, type RenameScope } from '../../sessions/rename-host';
import { AmwError } from '../../../../shared/errors';

/** What a rename carries along, from the stages of this build. */
const RENAME_SCOPE: RenameScope = {
  multiHostStages: new Set(
    STAGE_DEFINITIONS.filter((d) => d.shared.runsOn === 'hosts').map((d) => d.shared.id),
  ),
  columns: STAGE_DEFINITIONS.flatMap((d) => d.hostColumns ?? []),
};

/**
 * A rename is refused while a job works on the host (it would look the old name up, or write it
 * after the rename), and onto a name the history of a removed host still uses (the two
 * machines' histories would merge for good).
 */
function refuseRename(s: Services, from: string, to: string): void {
  const open = [
    ...s.jobs.list({ status: 'queued', limit: 1000 }),
    ...s.jobs.list({ status: 'running', limit: 1000 }),
  ];
  for (const j of open) {
    const p = j.params;
    const names = [p.host, p.name, ...(Array.isArray(p.hosts) ? p.hosts : [])];
    if (names.includes(from))
      throw new AmwError('CONFLICT', msg('errors.text.hostBusy', { name: from, job: j.kind }), {
        name: from,
        job: j.id,
      });
  }
  if (nameHasHistory(s.db, to))
    throw new AmwError('CONFLICT', msg('errors.text.hostNameHasHistory', { name: to }), {
      name: to,
    });
}

/** A key file that is not there is worth a warning at save, not a refusal (it may come later). */
function withKeyWarning<H extends { identityFile: string | null }>(
  host: H,
): H & { warnings?: Text[] } {
  const file = host.identityFile;
  if (!file) return host;
  const path = file.replace(/^~(?=\/|$)/, homedir());
  return existsSync(path) ? host : { ...host, warnings: [msg('hosts.warn.keyMissing', { file })] };
}

export function hostsHandlers(
  s: Services,
): DomainHandlers<MethodsOf<'hosts' | 'inventory' | 'fleet'>> {
  return {
    'hosts.list': ({ group }) => s.hostRepo.summaries(group),
    'hosts.get': ({ name }) => {
      const found = s.hostRepo.summaries().find((h) => h.name === name);
      return found ?? { ...s.hostRepo.get(name), inventory: null, savedSecret: false };
    },
    'hosts.add': (input) => {
      const host = s.hostRepo.add(input);
      s.bus.emit('hosts.changed', { name: host.name });
      return withKeyWarning(host);
    },
    'hosts.update': ({ name, patch }) => {
      // a rename carries the host's sessions, runs and waivers with it, all or nothing
      const host = s.db.transaction(() => {
        const { id } = s.hostRepo.get(name);
        if (patch.name !== undefined && patch.name !== name) refuseRename(s, name, patch.name);
        const updated = s.hostRepo.update(name, patch);
        s.sessions.renameHost({ id, from: name, to: updated.name }, RENAME_SCOPE);
        return updated;
      })();
      s.bus.emit(
        'hosts.changed',
        host.name !== name ? { name: host.name, renamedFrom: name } : { name: host.name },
      );
      return withKeyWarning(host);
    },
    'hosts.remove': ({ name }) => {
      s.hostRepo.remove(name);
      s.bus.emit('hosts.changed', { name });
      return { removed: name };
    },
    'hosts.importSshConfig': (input) => {
      const result = importSshConfig(s.hostRepo, input);
      for (const name of [...result.added, ...result.updated])
        s.bus.emit('hosts.changed', { name });
      return result;
    },
    'hosts.test': ({ name, password }) => s.hosts.test(name, password),
    'hosts.rememberPassword': ({ name, password }) => {
      s.hosts.secrets.remember(s.hostRepo.get(name).id, password);
      s.bus.emit('hosts.changed', { name });
      return { ok: true as const };
    },
    'hosts.forgetPassword': ({ name }) => {
      s.hosts.secrets.forget(s.hostRepo.get(name).id);
      s.bus.emit('hosts.changed', { name });
      return { ok: true as const };
    },
    'hosts.answerSecret': ({ promptId, secret }) => {
      s.prompts.answerSecret(promptId, secret);
      return { ok: true as const };
    },
    'hosts.answerHostKey': ({ promptId, accept }) => {
      s.prompts.answer(promptId, accept);
      return { ok: true as const };
    },
    'inventory.take': ({ name, password }) => {
      s.hostRepo.get(name); // NOT_FOUND now, not inside the job
      return {
        jobId: s.jobs.start('inventory', { host: name }, (ctx) =>
          s.hosts.inventory(name, ctx, password),
        ).id,
      };
    },
    'inventory.list': ({ name }) => s.hostRepo.inventories(name),
    'inventory.get': ({ id }) => s.hostRepo.inventory(id),
    'inventory.diff': ({ a, b }) =>
      diffJson(
        stripVolatile(s.hostRepo.inventory(a).data),
        stripVolatile(s.hostRepo.inventory(b).data),
      ),
    'fleet.inventory': ({ names, group }) => {
      const targets = names ?? s.hostRepo.list(group).map((h) => h.name);
      targets.forEach((n) => s.hostRepo.get(n));
      return {
        jobId: s.jobs.start('fleet.inventory', { hosts: targets }, (ctx) =>
          s.hosts.fleetInventory(targets, ctx),
        ).id,
      };
    },
    'fleet.table': ({ group }) => s.hosts.fleetTable(group),
  };
}

/** Two snapshots differ in time and host by nature; the diff is about what the machines have. */
function stripVolatile(inv: Inventory): Omit<Inventory, 'takenAt' | 'host'> {
  const { takenAt: _t, host: _h, ...rest } = inv;
  return rest;
}
