import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import type {
  ApplyResult,
  CodeFileContent,
  CodeFileEntry,
  CodeFinding,
  CodeScanRecord,
  CodeScanSummary,
  Effort,
  FixMode,
  ReviewState,
  Severity,
} from '../../../shared/api';
import { AmwError } from '../../../shared/errors';
import { msg, type Msg } from '../../../shared/api/text';
import type { ArtifactStore } from '../db/artifacts';
import { nowIso, type Db } from '../db/open';
import { unifiedPatch } from '../analyzer/fix';
import { lineBlocks } from '../../../shared/diff/line-diff';

interface ScanRow {
  id: number;
  session_id: number | null;
  root: string;
  mode: FixMode;
  files: number;
  lines: number;
  effort: string;
  warnings: string;
  skipped: string;
  created_at: string;
}

interface FileRow {
  file: string;
  original_sha256: string;
  proposed_sha256: string;
  parses: number;
  review: ReviewState;
  reviewed_sha256: string | null;
  /** JSON: the changes rejected one by one (CodeFileContent.rejected). */
  rejected: string;
  applied_at: string | null;
}

interface FindingRow {
  file: string;
  line: number;
  col: number;
  end_line: number;
  end_col: number;
  rule_id: string;
  severity: Severity;
  category: string;
  message: string;
  fix: string | null;
  text: string | null;
}

export interface NewScan {
  sessionId: number | null;
  stageRunId: number | null;
  root: string;
  mode: FixMode;
  files: number;
  lines: number;
  effort: Effort;
  warnings: Msg[];
  /** Files left out as not text (NUL bytes): neither their lines nor findings count. */
  skipped: string[];
  findings: CodeFinding[];
  /** Every file with findings: its text as scanned and the proposal (equal when none). */
  texts: Map<string, { original: string; proposed: string; parses: boolean }>;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** Code scans, their findings and the review of each file, in SQLite plus text artifacts. */
export class CodeReviewStore {
  constructor(
    private readonly db: Db,
    private readonly artifacts: ArtifactStore,
  ) {}

  /** The scan, its findings and its files land in one transaction. */
  save(scan: NewScan): number {
    // artifacts are content-addressed files: writing them first can only leave unused files
    const shas = new Map(
      [...scan.texts].map(([file, t]) => [
        file,
        {
          original: this.artifacts.put(t.original, 'code.original', 'text/x-python'),
          proposed: this.artifacts.put(t.proposed, 'code.proposed', 'text/x-python'),
          parses: t.parses,
        },
      ]),
    );
    return this.db.transaction(() => {
      const now = nowIso();
      const id = Number(
        this.db
          .prepare(
            `INSERT INTO code_scans (session_id, stage_run_id, root, mode, files, lines, effort, warnings, skipped, created_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          )
          .run(
            scan.sessionId,
            scan.stageRunId,
            scan.root,
            scan.mode,
            scan.files,
            scan.lines,
            JSON.stringify(scan.effort),
            JSON.stringify(scan.warnings),
            JSON.stringify(scan.skipped),
            now,
          ).lastInsertRowid,
      );
      const file = this.db.prepare(
        'INSERT INTO code_files (scan_id, file, original_sha256, proposed_sha256, parses) VALUES (?, ?, ?, ?, ?)',
      );
      for (const [f, s] of shas) file.run(id, f, s.original, s.proposed, s.parses ? 1 : 0);
      const finding = this.db.prepare(
        `INSERT INTO findings (session_id, scan_id, file, line, col, end_line, end_col, rule_id, severity, category, message, fix, text, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      );
      for (const f of scan.findings) {
        finding.run(
          scan.sessionId,
          id,
          f.file,
          f.line,
          f.column,
          f.endLine,
          f.endColumn,
          f.ruleId,
          f.severity,
          f.category,
          f.message,
          f.fix ? JSON.stringify(f.fix) : null,
          f.text ? JSON.stringify(f.text) : null,
          now,
        );
      }
      return id;
    })();
  }

  private scanRow(id: number): ScanRow {
    const row = this.db.prepare('SELECT * FROM code_scans WHERE id = ?').get(id) as
      ScanRow | undefined;
    if (!row) throw new AmwError('NOT_FOUND', msg('errors.text.noScan', { id }), { scanId: id });
    return row;
  }

  private summary(row: ScanRow): CodeScanSummary {
    const counts = { error: 0, warning: 0, info: 0 };
    for (const c of this.db
      .prepare('SELECT severity, COUNT(*) AS n FROM findings WHERE scan_id = ? GROUP BY severity')
      .all(row.id) as { severity: Severity; n: number }[])
      counts[c.severity] = c.n;
    return {
      id: row.id,
      sessionId: row.session_id,
      root: row.root,
      mode: row.mode,
      files: row.files,
      lines: row.lines,
      counts,
      effort: JSON.parse(row.effort) as Effort,
      // a scan stored before warnings were messages holds English text: shown as it is
      warnings: (JSON.parse(row.warnings) as (string | Msg)[]).map((w) =>
        typeof w === 'string' ? { en: w, 'zh-CN': w } : w,
      ),
      skipped: JSON.parse(row.skipped) as string[],
      reviewed: this.reviewCounts(row.id),
      createdAt: row.created_at,
    };
  }

  private reviewCounts(scanId: number): CodeScanSummary['reviewed'] {
    const out = { changed: 0, accepted: 0, edited: 0, rejected: 0, applied: 0, inPart: 0 };
    for (const r of this.db
      .prepare(
        `SELECT review, applied_at IS NOT NULL AS applied, COUNT(*) AS n FROM code_files
         WHERE scan_id = ? AND original_sha256 <> proposed_sha256 GROUP BY review, applied`,
      )
      .all(scanId) as { review: ReviewState; applied: number; n: number }[]) {
      out.changed += r.n;
      // an applied file keeps saying it was taken in part (the folder lacks the rest)
      if (r.review === 'edited') out.inPart += r.n;
      if (r.applied) out.applied += r.n;
      else if (r.review !== 'pending') out[r.review] += r.n;
    }
    return out;
  }

  /**
   * How many of the proposal's changes an edited text takes: a proposed block counts when the
   * reviewed text has the same block (same original lines, same new lines).
   */
  private changesTaken(row: FileRow): { accepted: number; total: number } | undefined {
    if (row.review !== 'edited' || !row.reviewed_sha256) return undefined;
    const split = (t: string) => t.split(/\r\n|\r|\n/);
    const original = split(this.text(row.original_sha256));
    const proposed = split(this.text(row.proposed_sha256));
    const reviewed = split(this.text(row.reviewed_sha256));
    const key = (b: [number, number, number, number], side: string[]) =>
      `${b[0]}:${b[1]}:${side.slice(b[2], b[3]).join('\n')}`;
    const wanted = lineBlocks(original, proposed);
    const got = lineBlocks(original, reviewed);
    if (!wanted || !got) return undefined;
    const have = new Set(got.map((b) => key(b, reviewed)));
    return {
      accepted: wanted.filter((b) => have.has(key(b, proposed))).length,
      total: wanted.length,
    };
  }

  /**
   * The review decisions on a session's scans (the newest per file) and the applying of each
   * applied file, for its timeline.
   */
  reviewHistory(sessionId: number): {
    at: string;
    scanId: number;
    file: string;
    review: ReviewState | 'applied';
    partial?: { accepted: number; total: number };
  }[] {
    const rows = this.db
      .prepare(
        `SELECT f.* FROM code_files f JOIN code_scans s ON s.id = f.scan_id
         WHERE s.session_id = ? AND f.reviewed_at IS NOT NULL`,
      )
      .all(sessionId) as (FileRow & { scan_id: number; reviewed_at: string })[];
    return rows.flatMap((r) => {
      // a file accepted part way reads as such, not as "accepted with changes" (a stored text
      // the disk lost leaves the count out, not the whole timeline)
      let taken: ReturnType<CodeReviewStore['changesTaken']>;
      try {
        taken = this.changesTaken(r);
      } catch {
        taken = undefined;
      }
      const partial = taken && taken.accepted < taken.total ? { partial: taken } : {};
      const decided = { at: r.reviewed_at, scanId: r.scan_id, file: r.file, review: r.review };
      // writing it into the folder is an event of its own, after the decision
      return r.applied_at
        ? [
            { ...decided, ...partial },
            { ...decided, at: r.applied_at, review: 'applied' as const, ...partial },
          ]
        : [{ ...decided, ...partial }];
    });
  }

  list(sessionId?: number): CodeScanSummary[] {
    const rows = (
      sessionId
        ? this.db
            .prepare('SELECT * FROM code_scans WHERE session_id = ? ORDER BY id DESC')
            .all(sessionId)
        : this.db.prepare('SELECT * FROM code_scans ORDER BY id DESC LIMIT 100').all()
    ) as ScanRow[];
    return rows.map((r) => this.summary(r));
  }

  private findings(scanId: number, file?: string): CodeFinding[] {
    const rows = (
      file
        ? this.db
            .prepare('SELECT * FROM findings WHERE scan_id = ? AND file = ? ORDER BY line, col')
            .all(scanId, file)
        : this.db
            .prepare('SELECT * FROM findings WHERE scan_id = ? ORDER BY file, line, col')
            .all(scanId)
    ) as FindingRow[];
    return rows.map((r) => ({
      ruleId: r.rule_id,
      file: r.file,
      line: r.line,
      column: r.col,
      endLine: r.end_line,
      endColumn: r.end_col,
      severity: r.severity,
      category: r.category,
      message: r.message,
      ...(r.fix ? { fix: JSON.parse(r.fix) as CodeFinding['fix'] } : {}),
      ...(r.text ? { text: JSON.parse(r.text) as CodeFinding['text'] } : {}),
    }));
  }

  private fileRows(scanId: number): FileRow[] {
    return this.db
      .prepare('SELECT * FROM code_files WHERE scan_id = ? ORDER BY file')
      .all(scanId) as FileRow[];
  }

  private fileRow(scanId: number, file: string): FileRow {
    const row = this.db
      .prepare('SELECT * FROM code_files WHERE scan_id = ? AND file = ?')
      .get(scanId, file) as FileRow | undefined;
    if (!row)
      throw new AmwError('NOT_FOUND', msg('errors.text.fileNotInScan', { file, id: scanId }));
    return row;
  }

  private entry(row: FileRow, findings: CodeFinding[]): CodeFileEntry {
    const mine = findings.filter((f) => f.file === row.file);
    const changes = this.changesTaken(row);
    return {
      file: row.file,
      errors: mine.filter((f) => f.severity === 'error').length,
      warnings: mine.filter((f) => f.severity === 'warning').length,
      infos: mine.filter((f) => f.severity === 'info').length,
      hasText: row.original_sha256 !== '',
      changed: row.original_sha256 !== row.proposed_sha256,
      parses: row.parses === 1,
      review: row.review,
      ...(changes ? { changes } : {}),
      appliedAt: row.applied_at,
    };
  }

  get(scanId: number): CodeScanRecord {
    const row = this.scanRow(scanId);
    const findings = this.findings(scanId);
    const rows = this.fileRows(scanId);
    const listed = new Set(rows.map((r) => r.file));
    // findings in files without text (requirements, .cu sources) still belong in the tree
    const extra = [...new Set(findings.map((f) => f.file))]
      .filter((f) => !listed.has(f))
      .map((file) => ({
        file,
        original_sha256: '',
        proposed_sha256: '',
        parses: 1,
        review: 'pending' as const,
        reviewed_sha256: null,
        rejected: '[]',
        applied_at: null,
      }));
    return {
      ...this.summary(row),
      fileList: [...rows, ...extra]
        .map((r) => this.entry(r, findings))
        .sort((a, b) => a.file.localeCompare(b.file)),
      findings,
    };
  }

  private text(sha: string): string {
    return readFileSync(this.artifacts.pathOf(sha), 'utf8');
  }

  /** A file's texts (the engine adds the diff for the review: see `code.file`). */
  file(scanId: number, file: string): Omit<CodeFileContent, 'diff'> {
    this.scanRow(scanId);
    const row = this.fileRow(scanId, file);
    const own = row.reviewed_sha256 && row.reviewed_sha256 !== row.proposed_sha256;
    return {
      file,
      original: this.text(row.original_sha256),
      proposed: this.text(row.proposed_sha256),
      // an accepted file's text is the proposal: not sent twice
      reviewed: own ? this.text(row.reviewed_sha256!) : null,
      review: row.review,
      rejected: JSON.parse(row.rejected) as string[],
    };
  }

  review(
    scanId: number,
    file: string,
    review: ReviewState,
    text?: string,
    rejected: string[] = [],
  ): CodeFileEntry {
    const row = this.fileRow(scanId, file);
    if (row.applied_at) throw new AmwError('CONFLICT', msg('errors.text.alreadyApplied', { file }));
    let reviewed: string | null = null;
    if (review === 'accepted') reviewed = row.proposed_sha256;
    if (review === 'edited') {
      if (text === undefined) throw new AmwError('VALIDATION', msg('errors.text.editedNeedsText'));
      reviewed = this.artifacts.put(text, 'code.reviewed', 'text/x-python');
      // an "edit" that lands on the proposal or the original is that decision
      if (reviewed === row.proposed_sha256) review = 'accepted';
      else if (reviewed === row.original_sha256) {
        review = 'rejected';
        reviewed = null;
      }
    }
    // a decision on the whole file (the proposal, or the original) leaves nothing rejected apart
    const apart = review === 'pending' || review === 'edited' ? [...new Set(rejected)] : [];
    this.db
      .prepare(
        'UPDATE code_files SET review = ?, reviewed_sha256 = ?, reviewed_at = ?, rejected = ? WHERE scan_id = ? AND file = ?',
      )
      .run(
        review,
        reviewed,
        review === 'pending' ? null : nowIso(),
        JSON.stringify(apart),
        scanId,
        file,
      );
    return this.entry(this.fileRow(scanId, file), this.findings(scanId, file));
  }

  /** Accepted and edited files with their reviewed text. */
  private decided(scanId: number): { file: string; before: string; after: string; row: FileRow }[] {
    return this.fileRows(scanId)
      .filter((r) => (r.review === 'accepted' || r.review === 'edited') && r.reviewed_sha256)
      .map((r) => ({
        file: r.file,
        before: this.text(r.original_sha256),
        after: this.text(r.reviewed_sha256!),
        row: r,
      }))
      .filter((d) => d.before !== d.after);
  }

  patch(scanId: number): { patch: string; files: string[] } {
    this.scanRow(scanId);
    const decided = this.decided(scanId);
    return {
      patch: unifiedPatch(new Map(decided.map((d) => [d.file, d]))),
      files: decided.map((d) => d.file),
    };
  }

  /**
   * Backup first, then write each file through a temporary name; refuse before writing anything
   * when a file on disk is no longer what was scanned.
   */
  apply(scanId: number, backupRoot: string): ApplyResult {
    const scan = this.scanRow(scanId);
    const decided = this.decided(scanId).filter((d) => !d.row.applied_at);
    if (!decided.length) throw new AmwError('VALIDATION', msg('errors.text.nothingToApply'));
    const root = resolve(scan.root);
    const target = (file: string) => {
      const abs = resolve(root, file);
      const rel = relative(root, abs);
      if (rel.startsWith('..') || rel.startsWith(sep))
        throw new AmwError('VALIDATION', msg('errors.text.outsideRoot', { file, root }));
      return abs;
    };
    const changed = decided.filter((d) => {
      const abs = target(d.file);
      return !existsSync(abs) || sha256(readFileSync(abs, 'utf8')) !== d.row.original_sha256;
    });
    if (changed.length)
      throw new AmwError(
        'CONFLICT',
        msg('errors.text.changedSinceScan', { files: changed.map((d) => d.file) }),
        { files: changed.map((d) => d.file) },
      );
    const backupDir = join(backupRoot, `code-scan-${scanId}-${nowIso().replace(/[:.]/g, '-')}`);
    for (const d of decided) {
      const dest = join(backupDir, d.file);
      mkdirSync(dirname(dest), { recursive: true });
      copyFileSync(target(d.file), dest);
    }
    const applied: string[] = [];
    const mark = this.db.prepare(
      'UPDATE code_files SET applied_at = ? WHERE scan_id = ? AND file = ?',
    );
    for (const d of decided) {
      const abs = target(d.file);
      const tmp = `${abs}.amw-${process.pid}.tmp`;
      writeFileSync(tmp, d.after, { mode: statSync(abs).mode });
      renameSync(tmp, abs);
      mark.run(nowIso(), scanId, d.file);
      applied.push(d.file);
    }
    return { applied, backupDir };
  }
}
