import type { Db } from '../db/open';
import { nowIso } from '../db/open';
import type { HostColumn } from '../stages/define';

/** A host that changes its name (`id` is its row, which keeps its id). */
export interface RenamedHost {
  id: number;
  from: string;
  to: string;
}

export interface RenameScope {
  /** Stages that run on several hosts at once: their runs carry the hosts' names, not an id. */
  multiHostStages: ReadonlySet<string>;
  /** The stages' own columns that hold a host's name. */
  columns: readonly HostColumn[];
}

/** A target ("a" or "a,b") with one name replaced; other names, and parts of names, stay. */
export const renameInTarget = (target: string, from: string, to: string): string =>
  target
    .split(',')
    .map((h) => (h === from ? to : h))
    .join(',');

/** A check id that names its host (`dist.link@a`, `dist.link@a#0`, the fleet checks') renamed. */
export function renameInCheckId(id: string, from: string, to: string): string {
  const m = /^(.+@)([^@#]*)(#\d+)?$/.exec(id);
  return m && m[2] === from ? `${m[1]}${to}${m[3] ?? ''}` : id;
}

const parseNames = (json: string): string[] | null => {
  try {
    const v: unknown = JSON.parse(json);
    return Array.isArray(v) && v.every((x) => typeof x === 'string') ? v : null;
  } catch {
    return null; // a damaged row keeps what it holds rather than block every rename
  }
};

/**
 * What a host's name is written into follows a rename, so its history and its waivers stay its
 * own. Its runs are those that ran there (their host id), and the several-host runs naming it
 * since its row was made (an earlier host of that name was another machine; an import's label
 * is no host): those runs' targets and their checks' per-host ids (`dist.link@a#0`), the
 * waivers and review comments on them, the stages' own columns, the sessions that ran there or
 * came after the host, and the projects. The audit log is not rewritten: a `host-rename` entry
 * lets a reader map its older entries. The caller's transaction holds it all.
 */
export function renameHostReferences(db: Db, host: RenamedHost, scope: RenameScope): void {
  const { from, to } = host;
  if (from === to) return;
  const since =
    (
      db.prepare('SELECT created_at FROM hosts WHERE id = ?').get(host.id) as
        { created_at: string } | undefined
    )?.created_at ?? '';
  // a target is one name or a comma list; instr over ",a,b," finds the name, never a part of one
  const named = `,${from},`;
  const runs = (
    db
      .prepare(
        `SELECT id, session_id, stage, target, host_id, started_at FROM stage_runs
         WHERE target IS NOT NULL AND instr(',' || target || ',', ?) > 0`,
      )
      .all(named) as {
      id: number;
      session_id: number;
      stage: string;
      target: string;
      host_id: number | null;
      started_at: string;
    }[]
  ).filter(
    (r) =>
      r.host_id === host.id ||
      (r.host_id === null && scope.multiHostStages.has(r.stage) && r.started_at >= since),
  );
  const runIds = JSON.stringify(runs.map((r) => r.id));
  const pairs = new Set(runs.map((r) => `${r.session_id}\u0000${r.target}`));
  const ours = (session: number | null, target: string) => pairs.has(`${session}\u0000${target}`);

  const updateRun = db.prepare('UPDATE stage_runs SET target = ? WHERE id = ?');
  for (const r of runs) updateRun.run(renameInTarget(r.target, from, to), r.id);
  const results = db
    .prepare(
      `SELECT id, check_id FROM check_results
       WHERE stage_run_id IN (SELECT value FROM json_each(?)) AND instr(check_id, '@') > 0`,
    )
    .all(runIds) as { id: number; check_id: string }[];
  const updateResult = db.prepare('UPDATE check_results SET check_id = ? WHERE id = ?');
  for (const c of results) {
    const id = renameInCheckId(c.check_id, from, to);
    if (id !== c.check_id) updateResult.run(id, c.id);
  }

  const waivers = db
    .prepare(
      `SELECT id, session_id, target, check_id FROM waivers
       WHERE target IS NOT NULL AND instr(',' || target || ',', ?) > 0`,
    )
    .all(named) as { id: number; session_id: number; target: string; check_id: string }[];
  const updateWaiver = db.prepare('UPDATE waivers SET target = ?, check_id = ? WHERE id = ?');
  for (const w of waivers)
    if (ours(w.session_id, w.target))
      updateWaiver.run(
        renameInTarget(w.target, from, to),
        renameInCheckId(w.check_id, from, to),
        w.id,
      );

  const comments = db
    .prepare(
      `SELECT id, session_id, target FROM review_comments
       WHERE target LIKE 'check:%' AND instr(target, ?) > 0`,
    )
    .all(from) as { id: number; session_id: number | null; target: string }[];
  const updateComment = db.prepare('UPDATE review_comments SET target = ? WHERE id = ?');
  for (const c of comments) {
    const m = /^check:(.+)@([^@]*)$/.exec(c.target);
    if (m && ours(c.session_id, m[2]!))
      updateComment.run(
        `check:${renameInCheckId(m[1]!, from, to)}@${renameInTarget(m[2]!, from, to)}`,
        c.id,
      );
  }

  // identifiers from code (the stage definitions), never from data
  for (const { table, column, runColumn, scope: which, where } of scope.columns)
    db.prepare(
      `UPDATE ${table} SET ${column} = ? WHERE ${column} = ? AND ${runColumn} IN (${
        which === 'runs'
          ? 'SELECT value FROM json_each(?)'
          : 'SELECT id FROM stage_runs WHERE started_at >= ?'
      })${where ? ` AND (${where})` : ''}`,
    ).run(to, from, which === 'runs' ? runIds : since);

  // the JSON lists of host names: a session's when it ran there or came after the host
  const ranHere = new Set(runs.map((r) => r.session_id));
  const renameInLists = (
    table: 'sessions' | 'projects',
    column: string,
    take: (row: { id: number; created_at: string }) => boolean,
  ): number[] => {
    const rows = db
      .prepare(
        `SELECT id, created_at, ${column} AS names FROM ${table} WHERE instr(${column}, ?) > 0`,
      )
      .all(JSON.stringify(from)) as { id: number; created_at: string; names: string }[];
    const update = db.prepare(`UPDATE ${table} SET ${column} = ? WHERE id = ?`);
    return rows.flatMap((r) => {
      const names = parseNames(r.names);
      if (!names?.includes(from) || !take(r)) return [];
      update.run(JSON.stringify(names.map((h) => (h === from ? to : h))), r.id);
      return [r.id];
    });
  };
  const touched = new Set([
    ...ranHere,
    ...renameInLists('sessions', 'hosts', (s) => ranHere.has(s.id) || s.created_at >= since),
  ]);
  renameInLists('projects', 'target_hosts', () => true);

  db.prepare(
    `INSERT INTO audit_log (at, actor, action, target, detail) VALUES (?, '', 'host-rename', ?, ?)`,
  ).run(nowIso(), String(host.id), JSON.stringify({ from, to, sessions: [...touched] }));
}

/**
 * Whether a name still stands for something in the history — runs, waivers, a session's hosts —
 * of a host no longer there: taking it would merge that machine's history with another's.
 */
export function nameHasHistory(db: Db, name: string): boolean {
  const named = `,${name},`;
  return !!(
    db
      .prepare(
        `SELECT 1 FROM stage_runs WHERE target IS NOT NULL AND instr(',' || target || ',', ?) > 0
         UNION ALL SELECT 1 FROM waivers WHERE target IS NOT NULL AND instr(',' || target || ',', ?) > 0
         UNION ALL SELECT 1 FROM sessions WHERE instr(hosts, ?) > 0
         LIMIT 1`,
      )
      .get(named, named, JSON.stringify(name)) ?? null
  );
}

/**
 * The renames the audit log holds, oldest first, to read its older entries by today's names —
 * in the sessions each rename reached (another session's same name was another machine).
 */
export function hostRenames(
  db: Db,
): { id: number; from: string; to: string; sessions: ReadonlySet<number> }[] {
  return (
    db
      .prepare(`SELECT id, detail FROM audit_log WHERE action = 'host-rename' ORDER BY id`)
      .all() as { id: number; detail: string }[]
  ).flatMap((r) => {
    try {
      const d = JSON.parse(r.detail) as { from?: unknown; to?: unknown; sessions?: unknown };
      const sessions = new Set(
        Array.isArray(d.sessions) ? d.sessions.filter((x) => typeof x === 'number') : [],
      );
      return typeof d.from === 'string' && typeof d.to === 'string'
        ? [{ id: r.id, from: d.from, to: d.to, sessions }]
        : [];
    } catch {
      return [];
    }
  });
}
