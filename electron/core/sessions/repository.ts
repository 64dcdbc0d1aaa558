import { gitSync } from '../git/safe-git';
import { existsSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import type {
  CheckOutcome,
  CompareRow,
  ProjectRecord,
  SessionRecord,
  StageRunRecord,
  StageStatus,
  TimelineEvent,
} from '../../../shared/api';
import { AmwError } from '../../../shared/errors';
import { msg } from '../../../shared/api/text';
import { LOCAL_TARGET } from '../../../shared/api/hosts';
import { isWaived, WAIVABLE_STATUSES } from '../../../shared/api/stages';
import { sharedStage } from '../../../shared/stages';
import type { Db } from '../db/open';
import {
  hostRenames,
  renameHostReferences,
  renameInCheckId,
  renameInTarget,
  type RenamedHost,
  type RenameScope,
} from './rename-host';
import { nowIso } from '../db/open';

interface RunRow {
  id: number;
  session_id: number;
  stage: string;
  host: string | null;
  status: StageStatus;
  started_at: string;
  finished_at: string | null;
}

/** What a run on this machine (the code folder), not on a host, names as its target. */
export const LOCAL_HOST = LOCAL_TARGET;

/** How a rerun of a stage merges into the session's view (the stage's definition says). */
export type MergeRule = (stage: string) => 'by-check' | 'replace';

const RANK: Record<string, number> = { pass: 0, skip: 0, warn: 1, error: 2, fail: 3 };

/** Projects, sessions, stage runs, check results and waivers. */
export class SessionRepository {
  constructor(
    private readonly db: Db,
    private readonly mergeOf: MergeRule = () => 'by-check',
  ) {
    // A run left "running" by a process that is gone was cut off: say so, never leave it half-done.
    // (A run of a live process has its job row running; one without a job never got started.)
    this.db
      .prepare(
        `UPDATE stage_runs SET status = 'interrupted', finished_at = COALESCE(finished_at, ?)
         WHERE status = 'running' AND (job_id IS NULL OR job_id IN (SELECT id FROM jobs WHERE status <> 'running'))`,
      )
      .run(nowIso());
  }

  createProject(p: {
    name: string;
    codeLocation?: string | null;
    targetHosts: string[];
    baseline?: unknown;
  }): ProjectRecord {
    if (this.db.prepare('SELECT 1 FROM projects WHERE name = ?').get(p.name)) {
      throw new AmwError('CONFLICT', msg('errors.text.projectExists', { name: p.name }), {
        name: p.name,
      });
    }
    const now = nowIso();
    this.db
      .prepare(
        'INSERT INTO projects (name, code_location, target_hosts, baseline, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)',
      )
      .run(
        p.name,
        p.codeLocation ?? null,
        JSON.stringify(p.targetHosts),
        p.baseline ? JSON.stringify(p.baseline) : null,
        now,
        now,
      );
    return this.project(p.name);
  }

  project(name: string): ProjectRecord {
    const r = this.db.prepare('SELECT * FROM projects WHERE name = ?').get(name) as
      | {
          id: number;
          name: string;
          code_location: string | null;
          target_hosts: string;
          baseline: string | null;
          created_at: string;
        }
      | undefined;
    if (!r) throw new AmwError('NOT_FOUND', msg('errors.text.noProject', { name }), { name });
    return {
      id: r.id,
      name: r.name,
      codeLocation: r.code_location,
      targetHosts: JSON.parse(r.target_hosts) as string[],
      baseline: r.baseline ? JSON.parse(r.baseline) : null,
      createdAt: r.created_at,
    };
  }

  /** Changes the fields given; `null` clears the code location or the baseline. */
  updateProject(
    name: string,
    change: { codeLocation?: string | null; targetHosts?: string[]; baseline?: unknown },
  ): ProjectRecord {
    const before = this.project(name);
    const codeLocation =
      change.codeLocation === undefined ? before.codeLocation : change.codeLocation;
    const targetHosts = change.targetHosts ?? before.targetHosts;
    const baseline = change.baseline === undefined ? before.baseline : change.baseline;
    this.db
      .prepare(
        'UPDATE projects SET code_location = ?, target_hosts = ?, baseline = ?, updated_at = ? WHERE id = ?',
      )
      .run(
        codeLocation,
        JSON.stringify(targetHosts),
        baseline ? JSON.stringify(baseline) : null,
        nowIso(),
        before.id,
      );
    return this.project(name);
  }

  projects(): ProjectRecord[] {
    return (
      this.db.prepare('SELECT name FROM projects ORDER BY name').all() as { name: string }[]
    ).map((r) => this.project(r.name));
  }

  createSession(opts: {
    project?: string;
    title?: string;
    codeCommit?: string;
    host?: string;
    hosts?: string[];
  }): number {
    const project = opts.project ? this.project(opts.project) : null;
    const codeCommit =
      opts.codeCommit ?? (project?.codeLocation ? gitCommit(project.codeLocation) : null);
    const hosts =
      opts.hosts ??
      (project?.targetHosts.length ? project.targetHosts : opts.host ? [opts.host] : []);
    const title =
      opts.title ??
      (project
        ? `${project.name} ${new Date().toISOString().slice(0, 16).replace('T', ' ')}`
        : `ad-hoc ${hosts.join(', ')}`.trim());
    return Number(
      this.db
        .prepare(
          'INSERT INTO sessions (project_id, title, code_commit, hosts, created_at) VALUES (?, ?, ?, ?, ?)',
        )
        .run(project?.id ?? null, title, codeCommit, JSON.stringify(hosts), nowIso())
        .lastInsertRowid,
    );
  }

  /** Every run (reruns too) and every waiver of a session, for its timeline. */
  history(sessionId: number): TimelineEvent[] {
    this.session(sessionId);
    const runs = this.db
      .prepare(
        `SELECT r.id, r.stage, COALESCE(r.target, h.name, '') AS host, r.status,
                COALESCE(r.finished_at, r.started_at) AS at
         FROM stage_runs r LEFT JOIN hosts h ON h.id = r.host_id WHERE r.session_id = ?`,
      )
      .all(sessionId) as {
      id: number;
      stage: string;
      host: string;
      status: StageStatus;
      at: string;
    }[];
    const waivers = this.db
      .prepare(
        `SELECT id, check_id, COALESCE(target, '') AS host, waived_by, reason, created_at
         FROM waivers WHERE session_id = ?`,
      )
      .all(sessionId) as {
      id: number;
      check_id: string;
      host: string;
      waived_by: string;
      reason: string;
      created_at: string;
    }[];
    const renames = hostRenames(this.db);
    // targets are "<session>/<check>": the range ["N/", "N0") is exactly session N's, on the index
    const audit = (
      this.db
        .prepare(
          `SELECT id, action, at, actor, target, detail FROM audit_log
           WHERE action IN ('waive', 'unwaive') AND target >= ? AND target < ?
           ORDER BY id`,
        )
        .all(`${sessionId}/`, `${sessionId}0`) as {
        id: number;
        action: 'waive' | 'unwaive';
        at: string;
        actor: string;
        target: string;
        detail: string;
      }[]
    ).map((a) => {
      const d = auditDetail(a.detail);
      const text = (v: unknown) => (typeof v === 'string' ? v : '');
      // an entry names hosts as they were called then: read by today's names
      let host = text(d.target);
      let checkId = a.target.slice(String(sessionId).length + 1);
      for (const r of renames)
        if (r.id > a.id && r.sessions.has(sessionId)) {
          host = renameInTarget(host, r.from, r.to);
          checkId = renameInCheckId(checkId, r.from, r.to);
        }
      return {
        action: a.action,
        at: a.at,
        checkId,
        host,
        by: a.actor,
        reason: text(d.reason),
        waivedBy: text(d.waivedBy),
        waiverId: typeof d.waiverId === 'number' ? d.waiverId : null,
      };
    });
    const removed = audit
      .filter((a) => a.action === 'unwaive')
      .map((a) => ({
        kind: 'waiver-removed' as const,
        at: a.at,
        checkId: a.checkId,
        host: a.host,
        by: a.by,
        waivedBy: a.waivedBy,
      }));
    // a waiver taken back (or given again) stays in the history as it was given; the newest audit
    // entry of each waiver still in force is that waiver, already listed: found by the waiver's
    // row id and check (SQLite reuses the id of a deleted last row), or, for entries from before
    // ids were recorded, by check, where, who and why
    const given = audit.filter((a) => a.action === 'waive');
    for (const w of waivers) {
      const i = given.findLastIndex(
        (a) =>
          a.checkId === w.check_id &&
          (a.waiverId !== null
            ? a.waiverId === w.id
            : a.host === w.host && a.by === w.waived_by && a.reason === w.reason),
      );
      if (i >= 0) given.splice(i, 1);
    }
    const past = given.map((a) => ({
      kind: 'waiver' as const,
      at: a.at,
      checkId: a.checkId,
      host: a.host,
      by: a.by,
      reason: a.reason,
    }));
    return [
      ...removed,
      ...past,
      ...runs.map((r) => ({
        kind: 'run' as const,
        at: r.at,
        runId: r.id,
        stage: r.stage,
        host: r.host,
        status: r.status,
      })),
      ...waivers.map((w) => ({
        kind: 'waiver' as const,
        at: w.created_at,
        checkId: w.check_id,
        host: w.host,
        by: w.waived_by,
        reason: w.reason,
      })),
    ];
  }

  /** A host renamed: its history follows (rename-host.ts says what and why). */
  renameHost(host: RenamedHost, scope: RenameScope): void {
    renameHostReferences(this.db, host, scope);
  }

  /** The hosts a session targets, replaced as a whole. */
  setHosts(sessionId: number, hosts: string[]): void {
    this.session(sessionId);
    this.db
      .prepare('UPDATE sessions SET hosts = ? WHERE id = ?')
      .run(JSON.stringify(hosts), sessionId);
  }

  /** Adds a host to a session's targets the first time a stage runs there. */
  private addHost(sessionId: number, host: string): void {
    const row = this.db.prepare('SELECT hosts FROM sessions WHERE id = ?').get(sessionId) as
      { hosts: string } | undefined;
    const hosts = row ? (JSON.parse(row.hosts) as string[]) : [];
    if (!hosts.includes(host))
      this.db
        .prepare('UPDATE sessions SET hosts = ? WHERE id = ?')
        .run(JSON.stringify([...hosts, host]), sessionId);
  }

  session(id: number): SessionRecord {
    const s = this.db
      .prepare(
        'SELECT s.id, s.title, s.code_commit, s.hosts, s.created_at, p.name AS project FROM sessions s LEFT JOIN projects p ON p.id = s.project_id WHERE s.id = ?',
      )
      .get(id) as
      | {
          id: number;
          title: string;
          code_commit: string | null;
          hosts: string;
          created_at: string;
          project: string | null;
        }
      | undefined;
    if (!s) throw new AmwError('NOT_FOUND', msg('errors.text.noSession', { id }), { id });
    const rows = this.db
      .prepare(
        `SELECT r.id, r.session_id, r.stage, COALESCE(r.target, h.name) AS host, r.status, r.started_at, r.finished_at FROM stage_runs r
         LEFT JOIN hosts h ON h.id = r.host_id WHERE r.session_id = ? ORDER BY r.id`,
      )
      .all(id) as RunRow[];
    // Per stage and host, the newest result of every check: a rerun of one check replaces just it.
    const merged = new Map<string, StageRunRecord>();
    for (const row of rows) {
      const run = this.runRecord(row);
      const key = `${run.stage}@${run.host}`;
      const prev = merged.get(key);
      // `replace` stages: the newest finished run stands for the stage
      if (
        !prev ||
        (this.mergeOf(run.stage) === 'replace' && ['pass', 'warn', 'fail'].includes(run.status))
      ) {
        merged.set(key, run);
        continue;
      }
      const checks = new Map(prev.checks.map((c) => [c.id, c]));
      for (const c of run.checks) checks.set(c.id, c);
      const all = [...checks.values()];
      const live =
        run.status === 'running' ||
        run.status === 'error' ||
        run.status === 'cancelled' ||
        run.status === 'interrupted';
      merged.set(key, {
        ...run,
        checks: all,
        status: live && !run.checks.length ? run.status : stageStatus(all),
      });
    }
    return {
      id: s.id,
      project: s.project,
      title: s.title,
      hosts: JSON.parse(s.hosts) as string[],
      codeCommit: s.code_commit,
      createdAt: s.created_at,
      runs: [...merged.values()],
    };
  }

  sessions(project?: string): SessionRecord[] {
    const ids = (
      project
        ? this.db
            .prepare(
              'SELECT s.id FROM sessions s JOIN projects p ON p.id = s.project_id WHERE p.name = ? ORDER BY s.id DESC',
            )
            .all(project)
        : this.db.prepare('SELECT id FROM sessions ORDER BY id DESC LIMIT 200').all()
    ) as { id: number }[];
    return ids.map((r) => this.session(r.id));
  }

  /**
   * A new run, `running` until its job ends. `target` names what it runs on (host names, or null
   * for this machine); the hosts become the session's targets if they were not yet.
   */
  startRun(
    sessionId: number,
    stage: string,
    at: { hostId: number | null; target: string | null; addHosts: string[] },
  ): number {
    this.session(sessionId);
    at.addHosts.forEach((h) => this.addHost(sessionId, h));
    return Number(
      this.db
        .prepare(
          `INSERT INTO stage_runs (session_id, stage, host_id, target, status, started_at) VALUES (?, ?, ?, ?, 'running', ?)`,
        )
        .run(sessionId, stage, at.hostId, at.target ?? LOCAL_HOST, nowIso()).lastInsertRowid,
    );
  }

  /** The job that runs it, once started (the row exists first so its id can be returned at once). */
  attachJob(runId: number, jobId: string): void {
    this.db.prepare('UPDATE stage_runs SET job_id = ? WHERE id = ?').run(jobId, runId);
  }

  /** Every result of a run lands in one transaction with its final status: never half-written. */
  finishRun(runId: number, status: StageStatus, outcomes: CheckOutcome[]): void {
    const insert = this.db.prepare(
      'INSERT INTO check_results (stage_run_id, check_id, status, summary, evidence, remediation, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    this.db.transaction(() => {
      const now = nowIso();
      for (const o of outcomes) {
        insert.run(
          runId,
          o.id,
          o.status,
          JSON.stringify({
            title: o.title,
            summary: o.summary,
            ...(o.diagnosis ? { diagnosis: o.diagnosis } : {}),
            ...(o.host !== undefined ? { host: o.host } : {}),
            ...(o.device !== undefined ? { device: o.device } : {}),
          }),
          JSON.stringify(o.evidence ?? null),
          o.remediation ? JSON.stringify(o.remediation) : null,
          now,
        );
      }
      this.db
        .prepare('UPDATE stage_runs SET status = ?, finished_at = ? WHERE id = ?')
        .run(status, now, runId);
    })();
  }

  markRun(runId: number, status: StageStatus): void {
    this.db
      .prepare('UPDATE stage_runs SET status = ?, finished_at = ? WHERE id = ? AND status = ?')
      .run(status, nowIso(), runId, 'running');
  }

  run(runId: number): StageRunRecord {
    const r = this.db
      .prepare(
        'SELECT r.id, r.session_id, r.stage, COALESCE(r.target, h.name) AS host, r.status, r.started_at, r.finished_at FROM stage_runs r LEFT JOIN hosts h ON h.id = r.host_id WHERE r.id = ?',
      )
      .get(runId) as RunRow | undefined;
    if (!r)
      throw new AmwError('NOT_FOUND', msg('errors.text.noStageRun', { id: runId }), { runId });
    return this.runRecord(r);
  }

  private runRecord(r: RunRow): StageRunRecord {
    const rows = this.db
      .prepare(
        'SELECT check_id, status, summary, evidence, remediation FROM check_results WHERE stage_run_id = ? ORDER BY id',
      )
      .all(r.id) as {
      check_id: string;
      status: CheckOutcome['status'];
      summary: string;
      evidence: string | null;
      remediation: string | null;
    }[];
    const waivers = this.waivers(r.session_id, r.host ?? '');
    const checks: CheckOutcome[] = rows.map((c) => {
      const { title, summary, diagnosis, host, device } = JSON.parse(c.summary) as Pick<
        CheckOutcome,
        'title' | 'summary' | 'diagnosis' | 'host' | 'device'
      >;
      return {
        id: c.check_id,
        title,
        status: c.status,
        summary,
        ...(diagnosis ? { diagnosis } : {}),
        ...(host !== undefined ? { host } : {}),
        ...(device !== undefined ? { device } : {}),
        evidence: c.evidence ? JSON.parse(c.evidence) : null,
        remediation: c.remediation ? JSON.parse(c.remediation) : null,
        waiver: waivers.get(c.check_id) ?? null,
      };
    });
    const finished =
      r.status === 'running' ||
      r.status === 'interrupted' ||
      r.status === 'cancelled' ||
      r.status === 'error';
    return {
      id: r.id,
      sessionId: r.session_id,
      stage: r.stage,
      host: r.host ?? '?',
      status: finished ? r.status : stageStatus(checks),
      startedAt: r.started_at,
      finishedAt: r.finished_at,
      checks,
    };
  }

  private waivers(
    sessionId: number,
    target: string,
  ): Map<string, { reason: string; by: string; at: string }> {
    const rows = this.db
      .prepare(
        'SELECT check_id, reason, waived_by, created_at FROM waivers WHERE session_id = ? AND target = ?',
      )
      .all(sessionId, target) as {
      check_id: string;
      reason: string;
      waived_by: string;
      created_at: string;
    }[];
    return new Map(
      rows.map((w) => [w.check_id, { reason: w.reason, by: w.waived_by, at: w.created_at }]),
    );
  }

  /**
   * Waives a check where it failed: `target` as its run names it (a host, "a,b", "(local)" or an
   * import's source), so every stage's failures can be waived. Refused for a check that did not
   * fail, warn or error there. Keyed by that name alone, as runs are: it outlives a removed host.
   */
  waive(sessionId: number, target: string, checkId: string, reason: string, by: string): void {
    this.session(sessionId);
    const ran = this.db
      .prepare(
        `SELECT 1 FROM check_results c JOIN stage_runs r ON r.id = c.stage_run_id
         LEFT JOIN hosts h ON h.id = r.host_id
         WHERE r.session_id = ? AND COALESCE(r.target, h.name) = ? AND c.check_id = ?
           AND c.status IN (${WAIVABLE_STATUSES.map(() => '?').join(', ')}) LIMIT 1`,
      )
      .get(sessionId, target, checkId, ...WAIVABLE_STATUSES);
    if (!ran)
      throw new AmwError(
        'NOT_FOUND',
        msg('errors.text.noCheckRun', {
          check: checkId,
          target: target === LOCAL_TARGET ? msg('common.thisMachine') : target,
          session: sessionId,
        }),
        { sessionId, checkId, target },
      );
    this.db.transaction(() => {
      this.db
        .prepare('DELETE FROM waivers WHERE session_id = ? AND target = ? AND check_id = ?')
        .run(sessionId, target, checkId);
      const waiverId = Number(
        this.db
          .prepare(
            'INSERT INTO waivers (session_id, check_id, target, reason, waived_by, created_at) VALUES (?, ?, ?, ?, ?, ?)',
          )
          .run(sessionId, checkId, target, reason, by, nowIso()).lastInsertRowid,
      );
      this.db
        .prepare(
          `INSERT INTO audit_log (at, actor, action, target, detail) VALUES (?, ?, 'waive', ?, ?)`,
        )
        .run(nowIso(), by, `${sessionId}/${checkId}`, JSON.stringify({ reason, target, waiverId }));
    })();
  }

  /** Takes a waiver back; the audit log keeps what it said, so the timeline still shows both. */
  unwaive(sessionId: number, target: string, checkId: string, by: string): void {
    this.db.transaction(() => {
      const gone = this.db
        .prepare(
          'SELECT reason, waived_by FROM waivers WHERE session_id = ? AND target = ? AND check_id = ?',
        )
        .get(sessionId, target, checkId) as { reason: string; waived_by: string } | undefined;
      if (!gone) return;
      this.db
        .prepare('DELETE FROM waivers WHERE session_id = ? AND target = ? AND check_id = ?')
        .run(sessionId, target, checkId);
      this.db
        .prepare(
          `INSERT INTO audit_log (at, actor, action, target, detail) VALUES (?, ?, 'unwaive', ?, ?)`,
        )
        .run(
          nowIso(),
          by,
          `${sessionId}/${checkId}`,
          JSON.stringify({ target, reason: gone.reason, waivedBy: gone.waived_by }),
        );
    })();
  }

  compare(a: number, b: number): CompareRow[] {
    type Ran = {
      checkId: string;
      title: CheckOutcome['title'];
      stage: string;
      host: string;
      status: CheckOutcome['status'];
    };
    const index = (s: SessionRecord) => {
      const m = new Map<string, Ran>();
      for (const run of s.runs)
        for (const c of run.checks)
          m.set(`${run.host}\u0000${c.id}`, {
            checkId: c.id,
            title: c.title,
            stage: run.stage,
            host: run.host,
            status: c.status,
          });
      return m;
    };
    const sa = this.session(a);
    const sb = this.session(b);
    const ia = index(sa);
    const ib = index(sb);
    // a stage whose checks are what it found, run in a session without this check: it passed
    const passedIn = (s: SessionRecord, other: Ran): Ran | undefined =>
      sharedStage(other.stage)?.checksAreFindings &&
      s.runs.some((r) => r.stage === other.stage && r.host === other.host)
        ? { ...other, status: 'pass' as const }
        : undefined;
    const keys = [...new Set([...ia.keys(), ...ib.keys()])].sort();
    return keys.map((k) => {
      const x = ia.get(k) ?? passedIn(sa, ib.get(k)!);
      const y = ib.get(k) ?? passedIn(sb, ia.get(k)!);
      const change: CompareRow['change'] = !x
        ? 'new'
        : !y
          ? 'gone'
          : RANK[x.status]! > RANK[y.status]!
            ? 'improved'
            : RANK[x.status]! < RANK[y.status]!
              ? 'regressed'
              : 'same';
      return {
        checkId: (x ?? y)!.checkId,
        title: (y ?? x)!.title,
        stage: (y ?? x)!.stage,
        host: (x ?? y)!.host,
        a: x?.status ?? null,
        b: y?.status ?? null,
        change,
      };
    });
  }
}

/** An audit entry's detail; a damaged one reads as empty rather than breaking the timeline. */
function auditDetail(text: string): Record<string, unknown> {
  try {
    const d: unknown = JSON.parse(text);
    return d && typeof d === 'object' ? (d as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** The commit a local code folder is at, when it is a git checkout; null otherwise (or host:path). */
export function gitCommit(location: string): string | null {
  if (!isAbsolute(location) || !existsSync(location)) return null;
  try {
    const out = gitSync(location, ['rev-parse', 'HEAD'], { timeout: 5000 });
    return out.trim() || null;
  } catch {
    return null;
  }
}

/** A stage passes when nothing fails, or every failure is waived with a reason and a name. */
export function stageStatus(checks: CheckOutcome[]): StageStatus {
  const live = checks.filter((c) => !isWaived(c));
  if (live.some((c) => c.status === 'fail')) return 'fail';
  if (live.some((c) => c.status === 'error')) return 'error';
  if (live.some((c) => c.status === 'warn')) return 'warn';
  return 'pass';
}
