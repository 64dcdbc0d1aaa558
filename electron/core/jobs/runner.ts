import { randomUUID } from 'node:crypto';
import type { JobMessage, JobRecord, JobStatus } from '../../../shared/api';
import { AmwError, toWireError } from '../../../shared/errors';
import { msg } from '../../../shared/api/text';
import type { Db } from '../db/open';
import { nowIso } from '../db/open';
import type { EventBus } from '../events';

/** What a job body gets: its cancellation signal and a way to report progress. */
export interface JobContext {
  readonly signal: AbortSignal;
  /** fraction 0..1 (or null when unknown) and an optional localisable message. */
  progress(fraction: number | null, message?: JobMessage): void;
  /** Throws CANCELLED if the job was asked to stop; call between steps. */
  throwIfCancelled(): void;
}

export type JobBody<T> = (ctx: JobContext) => Promise<T>;

interface JobRow {
  id: string;
  kind: string;
  params: string;
  status: JobStatus;
  progress: number | null;
  message: string | null;
  result: string | null;
  error: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

/** Progress is pushed and persisted at most this often per job; state changes always go out. */
const PROGRESS_INTERVAL_MS = 100;

/**
 * Runs long work off the request path: the call that starts a job returns its id at once, progress
 * streams as `job.updated`, cancellation reaches the body through an AbortSignal, and every state
 * lands in SQLite so a reloaded UI (or the next process) sees how it ended.
 */
export class JobRunner {
  private readonly running = new Map<
    string,
    { controller: AbortController; done: Promise<void> }
  >();

  constructor(
    private readonly db: Db,
    private readonly bus: EventBus,
  ) {
    this.markOrphansInterrupted();
  }

  /**
   * A job whose owning process is gone did not finish: say so instead of leaving it "running"
   * forever. Jobs of another live process (the app while the CLI runs) are left alone.
   */
  private markOrphansInterrupted(): void {
    const rows = this.db
      .prepare(`SELECT id, owner_pid FROM jobs WHERE status IN ('queued','running')`)
      .all() as { id: string; owner_pid: number | null }[];
    const mark = this.db.prepare(
      `UPDATE jobs SET status = 'interrupted', finished_at = ? WHERE id = ?`,
    );
    for (const row of rows) {
      if (row.owner_pid !== null && row.owner_pid !== process.pid && processAlive(row.owner_pid)) {
        continue;
      }
      mark.run(nowIso(), row.id);
    }
  }

  start<T>(kind: string, params: Record<string, unknown>, body: JobBody<T>): JobRecord {
    const id = randomUUID();
    const createdAt = nowIso();
    this.db
      .prepare(
        `INSERT INTO jobs (id, kind, params, status, created_at, started_at, owner_pid)
         VALUES (?, ?, ?, 'running', ?, ?, ?)`,
      )
      .run(id, kind, JSON.stringify(params), createdAt, createdAt, process.pid);
    const controller = new AbortController();
    const started = this.get(id);
    this.bus.emit('job.updated', started);

    let lastPush = 0;
    const ctx: JobContext = {
      signal: controller.signal,
      progress: (fraction, message) => {
        const now = Date.now();
        const final = fraction === 1;
        if (!final && now - lastPush < PROGRESS_INTERVAL_MS) return;
        lastPush = now;
        const clamped = fraction === null ? null : Math.min(1, Math.max(0, fraction));
        this.db
          .prepare(`UPDATE jobs SET progress = ?, message = ? WHERE id = ? AND status = 'running'`)
          .run(clamped, message ? JSON.stringify(message) : null, id);
        this.bus.emit('job.updated', this.get(id));
      },
      throwIfCancelled: () => {
        if (controller.signal.aborted) throw cancelled();
      },
    };

    const done = (async () => {
      try {
        // Let the caller receive the job id before the body does any synchronous work.
        await new Promise((r) => setImmediate(r));
        ctx.throwIfCancelled();
        const result = await body(ctx);
        if (controller.signal.aborted) throw cancelled();
        this.finish(id, 'succeeded', { result });
      } catch (err) {
        const wire = toWireError(err);
        const status: JobStatus =
          controller.signal.aborted || wire.code === 'CANCELLED' ? 'cancelled' : 'failed';
        this.finish(id, status, {
          error: status === 'cancelled' ? toWireError(cancelled()) : wire,
        });
      } finally {
        this.running.delete(id);
      }
    })();
    this.running.set(id, { controller, done });
    return started;
  }

  cancel(id: string): JobRecord {
    const job = this.get(id);
    this.running.get(id)?.controller.abort();
    return job;
  }

  /** Resolves when the job has reached a final state (already final: at once). */
  async wait(id: string): Promise<JobRecord> {
    await this.running.get(id)?.done;
    return this.get(id);
  }

  get(id: string): JobRecord {
    const row = this.db.prepare('SELECT * FROM jobs WHERE id = ?').get(id) as JobRow | undefined;
    if (!row) throw new AmwError('NOT_FOUND', msg('errors.text.noJob', { id }), { id });
    return toRecord(row);
  }

  list(opts: { status?: JobStatus; limit?: number } = {}): JobRecord[] {
    const limit = opts.limit ?? 50;
    const rows = (
      opts.status
        ? this.db
            .prepare(
              'SELECT * FROM jobs WHERE status = ? ORDER BY created_at DESC, rowid DESC LIMIT ?',
            )
            .all(opts.status, limit)
        : this.db
            .prepare('SELECT * FROM jobs ORDER BY created_at DESC, rowid DESC LIMIT ?')
            .all(limit)
    ) as JobRow[];
    return rows.map(toRecord);
  }

  /** Cancels everything still running and waits for the bodies to unwind (shutdown). */
  async stopAll(): Promise<void> {
    const all = [...this.running.values()];
    for (const r of all) r.controller.abort();
    await Promise.allSettled(all.map((r) => r.done));
  }

  private finish(
    id: string,
    status: JobStatus,
    out: { result?: unknown; error?: ReturnType<typeof toWireError> },
  ): void {
    this.db
      .prepare(
        `UPDATE jobs SET status = ?, progress = CASE WHEN ? = 'succeeded' THEN 1 ELSE progress END,
           result = ?, error = ?, finished_at = ? WHERE id = ?`,
      )
      .run(
        status,
        status,
        out.result === undefined ? null : JSON.stringify(out.result),
        out.error ? JSON.stringify(out.error) : null,
        nowIso(),
        id,
      );
    this.bus.emit('job.updated', this.get(id));
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const cancelled = () => new AmwError('CANCELLED', 'The job was cancelled.');

function toRecord(row: JobRow): JobRecord {
  return {
    id: row.id,
    kind: row.kind,
    params: JSON.parse(row.params) as Record<string, unknown>,
    status: row.status,
    progress: row.progress,
    message: row.message ? (JSON.parse(row.message) as JobMessage) : null,
    result: row.result ? (JSON.parse(row.result) as unknown) : null,
    error: row.error ? (JSON.parse(row.error) as JobRecord['error']) : null,
    createdAt: row.created_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
  };
}
