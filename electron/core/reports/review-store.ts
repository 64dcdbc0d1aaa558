import type { ImportedReport, Report } from '../../../shared/api';
import { Report as ReportSchema } from '../../../shared/api';
import { AmwError } from '../../../shared/errors';
import { msg } from '../../../shared/api/text';
import type { ArtifactStore } from '../db/artifacts';
import { nowIso, type Db } from '../db/open';

export type ReportSource = { sessionId: number } | { importId: number };

const key = (s: ReportSource) =>
  'sessionId' in s ? { col: 'session_id', id: s.sessionId } : { col: 'import_id', id: s.importId };

/** Review comments and decisions (per session or imported report), and imported reports. */
export class ReviewStore {
  constructor(
    private readonly db: Db,
    private readonly artifacts: ArtifactStore,
  ) {}

  review(source: ReportSource): Report['review'] {
    const { col, id } = key(source);
    const comments = (
      this.db
        .prepare(
          `SELECT id, target, author, text, created_at FROM review_comments WHERE ${col} = ? ORDER BY id`,
        )
        .all(id) as {
        id: number;
        target: string;
        author: string;
        text: string;
        created_at: string;
      }[]
    ).map((c) => ({
      id: c.id,
      target: c.target,
      author: c.author,
      text: c.text,
      at: c.created_at,
    }));
    const decisions = (
      this.db
        .prepare(
          `SELECT id, decision, by_name, note, created_at FROM review_decisions WHERE ${col} = ? ORDER BY id`,
        )
        .all(id) as {
        id: number;
        decision: 'approve' | 'changes-requested';
        by_name: string;
        note: string;
        created_at: string;
      }[]
    ).map((d) => ({
      id: d.id,
      decision: d.decision,
      by: d.by_name,
      note: d.note,
      at: d.created_at,
    }));
    return { comments, decisions };
  }

  comment(source: ReportSource, target: string, author: string, text: string): void {
    this.exists(source);
    const { col, id } = key(source);
    this.db
      .prepare(
        `INSERT INTO review_comments (${col}, target, author, text, created_at) VALUES (?, ?, ?, ?, ?)`,
      )
      .run(id, target, author, text, nowIso());
  }

  decide(
    source: ReportSource,
    decision: 'approve' | 'changes-requested',
    by: string,
    note: string,
  ): void {
    this.exists(source);
    const { col, id } = key(source);
    this.db
      .prepare(
        `INSERT INTO review_decisions (${col}, decision, by_name, note, created_at) VALUES (?, ?, ?, ?, ?)`,
      )
      .run(id, decision, by, note, nowIso());
  }

  private exists(source: ReportSource): void {
    if ('importId' in source) this.imported(source.importId);
  }

  /** Validates a JSON report against the schema and keeps it, read-only. */
  import(json: string): ImportedReport {
    let doc: unknown;
    try {
      doc = JSON.parse(json);
    } catch (err) {
      throw new AmwError(
        'VALIDATION',
        msg('errors.text.notJson', { error: (err as Error).message }),
      );
    }
    const parsed = ReportSchema.safeParse(doc);
    if (!parsed.success) {
      const first = parsed.error.issues
        .slice(0, 3)
        .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
      throw new AmwError(
        'VALIDATION',
        msg('errors.text.notReport', { problems: first.join('; ') }),
      );
    }
    const r = parsed.data;
    const sha = this.artifacts.put(JSON.stringify(doc), 'report', 'application/json');
    const id = Number(
      this.db
        .prepare(
          'INSERT INTO imported_reports (title, session_id, generated_at, report_sha256, imported_at) VALUES (?, ?, ?, ?, ?)',
        )
        .run(r.session.title, r.session.id, r.generatedAt, sha, nowIso()).lastInsertRowid,
    );
    return this.imported(id);
  }

  imported(id: number): ImportedReport {
    const row = this.db.prepare('SELECT * FROM imported_reports WHERE id = ?').get(id) as
      | { id: number; title: string; session_id: number; generated_at: string; imported_at: string }
      | undefined;
    if (!row) throw new AmwError('NOT_FOUND', msg('errors.text.noImportedReport', { id }));
    return {
      id: row.id,
      title: row.title,
      sessionId: row.session_id,
      generatedAt: row.generated_at,
      importedAt: row.imported_at,
    };
  }

  importedList(): ImportedReport[] {
    return (
      this.db.prepare('SELECT id FROM imported_reports ORDER BY id DESC').all() as { id: number }[]
    ).map((r) => this.imported(r.id));
  }

  /** An imported report as it came, with this database's review added after its own. */
  importedReport(id: number, readArtifact: (sha: string) => string): Report {
    const row = this.db
      .prepare('SELECT report_sha256 FROM imported_reports WHERE id = ?')
      .get(id) as { report_sha256: string } | undefined;
    if (!row) throw new AmwError('NOT_FOUND', msg('errors.text.noImportedReport', { id }));
    const report = ReportSchema.parse(JSON.parse(readArtifact(row.report_sha256)));
    const local = this.review({ importId: id });
    if (!local.comments.length && !local.decisions.length) return report;
    return {
      ...report,
      review: {
        comments: [...report.review.comments, ...local.comments],
        decisions: [...report.review.decisions, ...local.decisions],
      },
    };
  }
}
