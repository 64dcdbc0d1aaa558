import { existsSync } from 'node:fs';
import type { HostInput, ImportResult } from '../../../shared/api';
import { HostName } from '../../../shared/api';
import { AmwError } from '../../../shared/errors';
import { msg } from '../../../shared/api/text';
import {
  defaultSshConfigPath,
  readSshConfigWithWarnings,
  type SshConfigHost,
} from '../ssh/ssh-config';
import type { HostRepository } from './repository';

const safeName = (alias: string) =>
  alias.replace(/[^A-Za-z0-9._-]/g, '-').replace(/^[^A-Za-z0-9]+/, '');

/** `[user@]host[:port]` as ProxyJump writes a hop that is not an alias. */
function parseHop(hop: string): { user: string | null; host: string; port: number } {
  const m = /^(?:([^@]+)@)?(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(hop);
  if (!m)
    throw new AmwError('SSH_CONFIG', msg('errors.text.proxyJumpUnreadable', { hop }), { hop });
  return {
    user: m[1] ?? null,
    host: m[2]!.replace(/^\[|\]$/g, ''),
    port: m[3] ? Number(m[3]) : 22,
  };
}

/**
 * Turns ssh_config hosts into workbench hosts. ProxyJump hops that are aliases map to those hosts;
 * literal hops become hosts of their own. Chains `a,b` become b-through-a.
 */
export function planImport(hosts: SshConfigHost[], only?: string[]): HostInput[] {
  const byAlias = new Map(hosts.map((h) => [h.alias, h]));
  const planned = new Map<string, HostInput>();
  const want = only ? new Set(only) : null;

  const addAlias = (h: SshConfigHost): string => {
    const name = safeName(h.alias);
    if (planned.has(name)) return name;
    planned.set(name, {
      name,
      hostname: h.hostname,
      port: h.port,
      username: h.user,
      identityFile: h.identityFiles[0] ?? null,
      jump: null,
      tags: ['ssh_config'],
    });
    planned.get(name)!.jump = addChain(h.proxyJump);
    return name;
  };
  const addChain = (hops: string[]): string | null => {
    let previous: string | null = null;
    for (const hop of hops) {
      const alias = byAlias.get(hop);
      let name: string;
      if (alias) name = addAlias(alias);
      else {
        const p = parseHop(hop);
        name = safeName(p.host);
        if (!planned.has(name))
          planned.set(name, {
            name,
            hostname: p.host,
            port: p.port,
            username: p.user,
            jump: null,
            tags: ['ssh_config'],
          });
      }
      if (previous && !planned.get(name)!.jump) planned.get(name)!.jump = previous;
      previous = name;
    }
    return previous;
  };

  for (const h of hosts) if (!want || want.has(h.alias) || want.has(safeName(h.alias))) addAlias(h);
  return [...planned.values()].filter((h) => HostName.safeParse(h.name).success);
}

export function importSshConfig(
  repo: HostRepository,
  opts: { file?: string; names?: string[]; dryRun?: boolean },
): ImportResult & { candidates: HostInput[]; missing?: string } {
  // no ~/.ssh/config is a normal state, not an error: the caller explains it and offers a file
  if (!opts.file && !existsSync(defaultSshConfigPath()))
    return { added: [], updated: [], skipped: [], candidates: [], missing: defaultSshConfigPath() };
  const read = readSshConfigWithWarnings(opts.file ?? defaultSshConfigPath());
  const plan = planImport(read.hosts, opts.names);
  const result: ImportResult & { candidates: HostInput[] } = {
    added: [],
    updated: [],
    skipped: [],
    warnings: read.warnings,
    candidates: plan,
  };
  if (opts.dryRun) return result;
  // jump hosts first, so every reference exists when it is written (linear: sets and a map)
  const order: HostInput[] = [];
  const placed = new Set<HostInput>();
  const byName = new Map(plan.map((p) => [p.name, p]));
  const visit = (h: HostInput, depth = 0) => {
    if (placed.has(h) || depth > 16) return;
    const j = h.jump ? byName.get(h.jump) : undefined;
    if (j) visit(j, depth + 1);
    placed.add(h);
    order.push(h);
  };
  plan.forEach((h) => visit(h));
  for (const h of order) {
    const existing = repo.find(h.name);
    try {
      if (!existing) {
        repo.add(h, 'ssh_config');
        result.added.push(h.name);
      } else if (existing.source === 'ssh_config') {
        repo.update(h.name, h);
        result.updated.push(h.name);
      } else {
        result.skipped.push({
          name: h.name,
          reason: 'a host with this name was added by hand; left unchanged',
        });
      }
    } catch (err) {
      result.skipped.push({ name: h.name, reason: (err as Error).message });
    }
  }
  return result;
}
