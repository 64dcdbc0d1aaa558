import type {
  HostInput,
  HostRecord,
  HostSummary,
  Inventory,
  InventorySnapshot,
  InventorySummary,
} from '../../../shared/api';
import { HostInput as HostInputSchema } from '../../../shared/api';
import { AmwError } from '../../../shared/errors';
import { msg } from '../../../shared/api/text';
import type { Db } from '../db/open';
import { nowIso } from '../db/open';
import { LOCAL_HOST_NAME } from '../local/local-exec';

interface HostRow {
  id: number;
  name: string;
  hostname: string;
  port: number;
  username: string | null;
  identity_file: string | null;
  jump_host_id: number | null;
  jump_name: string | null;
  group_name: string | null;
  tags: string;
  source: 'manual' | 'ssh_config';
  created_at: string;
  updated_at: string;
}

const SELECT_HOST = `SELECT h.*, j.name AS jump_name FROM hosts h LEFT JOIN hosts j ON j.id = h.jump_host_id`;

const toRecord = (r: HostRow): HostRecord => ({
  id: r.id,
  name: r.name,
  hostname: r.hostname,
  port: r.port,
  username: r.username,
  identityFile: r.identity_file,
  jump: r.jump_name,
  group: r.group_name,
  tags: JSON.parse(r.tags) as string[],
  source: r.source,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const HEALTH_RANK = ['OK', 'UNKNOWN', 'Warning', 'Alarm', 'Critical'] as const;

/** The gist of an inventory for lists and the fleet table. */
export function summarise(id: number, inv: Inventory): InventorySummary {
  const devices = inv.npu?.devices ?? [];
  const names = new Map<string, number>();
  for (const d of devices) if (d.name) names.set(d.name, (names.get(d.name) ?? 0) + 1);
  const chip = [...names.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? null;
  let worst: InventorySummary['health'] = devices.length ? 'OK' : null;
  for (const d of devices) {
    const h = (HEALTH_RANK as readonly string[]).includes(d.health ?? '')
      ? (d.health as (typeof HEALTH_RANK)[number])
      : 'UNKNOWN';
    if (
      worst &&
      HEALTH_RANK.indexOf(h) > HEALTH_RANK.indexOf(worst as (typeof HEALTH_RANK)[number])
    )
      worst = h;
  }
  return {
    id,
    takenAt: inv.takenAt,
    chip,
    chipCount: devices.length,
    health: worst,
    cann: inv.versions.cann,
    driver: inv.versions.driver,
    firmware: inv.versions.firmware,
    torch: inv.versions.torch,
    torchNpu: inv.versions.torchNpu,
    python: inv.versions.python,
  };
}

export class HostRepository {
  /** `onLocalAdded`: the built-in host got its row (a list shown elsewhere now lacks it). */
  constructor(
    private readonly db: Db,
    private readonly onLocalAdded: () => void = () => undefined,
  ) {}

  list(group?: string): HostRecord[] {
    const rows = (
      group === undefined
        ? this.db.prepare(`${SELECT_HOST} ORDER BY h.name`).all()
        : this.db.prepare(`${SELECT_HOST} WHERE h.group_name = ? ORDER BY h.name`).all(group)
    ) as HostRow[];
    return rows.map(toRecord);
  }

  find(name: string): HostRecord | null {
    const row = this.db.prepare(`${SELECT_HOST} WHERE h.name = ?`).get(name) as HostRow | undefined;
    if (!row && name === LOCAL_HOST_NAME) return this.addLocal();
    return row ? toRecord(row) : null;
  }

  /**
   * The built-in host `local` (this machine) gets its row the first time anyone names it, so its
   * inventories and stage runs are stored like any host's; lists show it once it has been used.
   */
  private addLocal(): HostRecord {
    const now = nowIso();
    this.db
      .prepare(
        `INSERT INTO hosts (name, hostname, port, tags, source, created_at, updated_at) VALUES (?, 'localhost', 22, '["this-machine"]', 'manual', ?, ?)`,
      )
      .run(LOCAL_HOST_NAME, now, now);
    this.onLocalAdded();
    return this.find(LOCAL_HOST_NAME)!;
  }

  get(name: string): HostRecord {
    const host = this.find(name);
    if (!host) throw new AmwError('NOT_FOUND', msg('errors.text.noHost', { name }), { name });
    return host;
  }

  private jumpId(jump: string | null | undefined, self?: string): number | null {
    if (!jump) return null;
    if (jump === self)
      throw new AmwError('VALIDATION', msg('errors.text.jumpSelf', { jump }), { jump });
    // this machine is not an SSH server the workbench knows how to reach: nothing to hop through
    if (jump === LOCAL_HOST_NAME)
      throw new AmwError('VALIDATION', msg('errors.text.jumpLocal', { jump }), { jump });
    const j = this.find(jump);
    if (!j) throw new AmwError('VALIDATION', msg('errors.text.jumpUnknown', { jump }), { jump });
    // refuse cycles: following the jump's own chain must never come back to us
    let cur: HostRecord | null = j;
    for (let i = 0; cur && i < 16; i++) {
      if (cur.name === self)
        throw new AmwError('VALIDATION', msg('errors.text.jumpLoop', { jump, self }), {
          jump,
        });
      cur = cur.jump ? this.find(cur.jump) : null;
    }
    return j.id;
  }

  add(input: HostInput, source: HostRecord['source'] = 'manual'): HostRecord {
    const h = HostInputSchema.parse(input);
    if (this.find(h.name))
      throw new AmwError('CONFLICT', msg('errors.text.hostExists', { name: h.name }), {
        name: h.name,
      });
    const now = nowIso();
    this.db
      .prepare(
        `INSERT INTO hosts (name, hostname, port, username, identity_file, jump_host_id, group_name, tags, source, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        h.name,
        h.hostname,
        h.port,
        h.username ?? null,
        h.identityFile ?? null,
        this.jumpId(h.jump, h.name),
        h.group ?? null,
        JSON.stringify(h.tags),
        source,
        now,
        now,
      );
    return this.get(h.name);
  }

  update(name: string, patch: Partial<HostInput>): HostRecord {
    const cur = this.get(name);
    const merged = HostInputSchema.parse({
      name: patch.name ?? cur.name,
      hostname: patch.hostname ?? cur.hostname,
      port: patch.port ?? cur.port,
      username: patch.username === undefined ? cur.username : patch.username,
      identityFile: patch.identityFile === undefined ? cur.identityFile : patch.identityFile,
      jump: patch.jump === undefined ? cur.jump : patch.jump,
      group: patch.group === undefined ? cur.group : patch.group,
      tags: patch.tags ?? cur.tags,
    });
    // the built-in host is this machine, reached without SSH: a name, address, user, key or jump
    // host would make it another machine (only its group and tags are the user's)
    if (
      name === LOCAL_HOST_NAME &&
      (merged.name !== cur.name ||
        merged.hostname !== cur.hostname ||
        merged.port !== cur.port ||
        (merged.username ?? null) !== cur.username ||
        (merged.identityFile ?? null) !== cur.identityFile ||
        (merged.jump ?? null) !== cur.jump)
    )
      throw new AmwError('VALIDATION', msg('errors.text.localFixed', { name }), { name });
    if (merged.name !== name && this.find(merged.name)) {
      throw new AmwError('CONFLICT', msg('errors.text.hostExists', { name: merged.name }), {
        name: merged.name,
      });
    }
    this.db
      .prepare(
        `UPDATE hosts SET name = ?, hostname = ?, port = ?, username = ?, identity_file = ?, jump_host_id = ?, group_name = ?, tags = ?, updated_at = ? WHERE id = ?`,
      )
      .run(
        merged.name,
        merged.hostname,
        merged.port,
        merged.username ?? null,
        merged.identityFile ?? null,
        this.jumpId(merged.jump, name),
        merged.group ?? null,
        JSON.stringify(merged.tags),
        nowIso(),
        cur.id,
      );
    return this.get(merged.name);
  }

  remove(name: string): void {
    // this machine is always there (it comes back the moment it is named): removing it would only
    // drop its inventories and detach its stage runs from it
    if (name === LOCAL_HOST_NAME)
      throw new AmwError('VALIDATION', msg('errors.text.localKept', { name }), { name });
    const host = this.get(name);
    const users = this.db.prepare('SELECT name FROM hosts WHERE jump_host_id = ?').all(host.id) as {
      name: string;
    }[];
    if (users.length) {
      throw new AmwError(
        'CONFLICT',
        msg('errors.text.jumpInUse', { name, users: users.map((u) => u.name) }),
        {
          name,
          usedBy: users.map((u) => u.name),
        },
      );
    }
    this.db.prepare('DELETE FROM hosts WHERE id = ?').run(host.id);
  }

  /** The jump chain of a host, first hop first. */
  jumpChain(host: HostRecord): HostRecord[] {
    const chain: HostRecord[] = [];
    let cur = host.jump ? this.get(host.jump) : null;
    while (cur) {
      if (chain.some((c) => c.id === cur!.id) || chain.length > 16) {
        throw new AmwError('VALIDATION', msg('errors.text.jumpChainLoops', { name: host.name }), {
          name: host.name,
        });
      }
      chain.unshift(cur);
      cur = cur.jump ? this.get(cur.jump) : null;
    }
    return chain;
  }

  // — inventories —

  saveInventory(hostId: number, inv: Inventory, rawSha256: string | null): number {
    return Number(
      this.db
        .prepare(
          'INSERT INTO inventories (host_id, taken_at, data, warnings, raw_sha256) VALUES (?, ?, ?, ?, ?)',
        )
        .run(hostId, inv.takenAt, JSON.stringify(inv), JSON.stringify(inv.warnings), rawSha256)
        .lastInsertRowid,
    );
  }

  inventories(name: string): { id: number; takenAt: string }[] {
    const host = this.get(name);
    return (
      this.db
        .prepare(
          'SELECT id, taken_at FROM inventories WHERE host_id = ? ORDER BY taken_at DESC, id DESC',
        )
        .all(host.id) as {
        id: number;
        taken_at: string;
      }[]
    ).map((r) => ({ id: r.id, takenAt: r.taken_at }));
  }

  inventory(id: number): InventorySnapshot {
    const row = this.db
      .prepare(
        'SELECT i.id, i.taken_at, i.data, h.name FROM inventories i JOIN hosts h ON h.id = i.host_id WHERE i.id = ?',
      )
      .get(id) as { id: number; taken_at: string; data: string; name: string } | undefined;
    if (!row) throw new AmwError('NOT_FOUND', msg('errors.text.noSnapshot', { id }), { id });
    return {
      id: row.id,
      hostName: row.name,
      takenAt: row.taken_at,
      data: JSON.parse(row.data) as Inventory,
    };
  }

  summaries(group?: string): HostSummary[] {
    const latest = this.db
      .prepare(
        `SELECT i.host_id, i.id, i.data FROM inventories i
         JOIN (SELECT host_id, MAX(id) AS id FROM inventories GROUP BY host_id) m ON m.id = i.id`,
      )
      .all() as { host_id: number; id: number; data: string }[];
    const byHost = new Map(
      latest.map((r) => [r.host_id, summarise(r.id, JSON.parse(r.data) as Inventory)]),
    );
    const saved = new Set(
      (this.db.prepare('SELECT host_id FROM secrets').all() as { host_id: number }[]).map(
        (r) => r.host_id,
      ),
    );
    return this.list(group).map((h) => ({
      ...h,
      inventory: byHost.get(h.id) ?? null,
      savedSecret: saved.has(h.id),
    }));
  }
}
