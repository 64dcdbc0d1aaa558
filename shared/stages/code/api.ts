import * as z from 'zod';
import { method } from '../../api/define';
import { Language, type IsoTime } from '../../api/common';
import type { JobStarted } from '../../api/jobs';
import type { Msg, Text } from '../../api/text';

export const FIX_MODES = ['rewrite', 'transfer'] as const;
export type FixMode = (typeof FIX_MODES)[number];
export type Severity = 'error' | 'warning' | 'info';

/** A text edit on a file (UTF-16 offsets, as JavaScript strings index). */
export interface CodeEdit {
  start: number;
  end: number;
  text: string;
}

/** What a rule is about (each rule's `category`; the filter names them in words). */
export const CODE_CATEGORIES = [
  'add',
  'amp',
  'attention',
  'compile',
  'cuda-api',
  'device',
  'distributed',
  'extension',
  'fused-op',
  'optimizer',
  'performance',
  'profiling',
  'project',
  'third-party',
  'triton',
  'unsupported-op',
] as const;

/** One finding, as stored and as printed by `amw scan --json`. */
export interface CodeFinding {
  ruleId: string;
  /** Relative to the scanned folder, with `/`. */
  file: string;
  line: number;
  column: number;
  endLine: number;
  endColumn: number;
  severity: Severity;
  category: string;
  /** In the scan's language (the CLI's `--json`, SARIF); `text` re-renders it in any language. */
  message: string;
  fix?: { description: string; edits: CodeEdit[] };
  /** The message and the fix as i18n keys (rule texts, namespace `rules`), for stored scans. */
  text?: { message: Msg; fix?: Msg };
}

export interface Effort {
  level: 'low' | 'medium' | 'high';
  /** The seeds' four dimensions, each with the counts behind it. */
  dimensions: { device: number; thirdParty: number; mixedPrecision: number; multiCard: number };
  notes: string[];
}

/**
 * `pending` until someone looks; `accepted` = the proposal as is; `rejected` = file left alone;
 * `edited` = some hunks reverted or hand edits (the reviewed text is stored).
 */
export const REVIEW_STATES = ['pending', 'accepted', 'rejected', 'edited'] as const;
export type ReviewState = (typeof REVIEW_STATES)[number];

export interface CodeFileEntry {
  file: string;
  errors: number;
  warnings: number;
  infos: number;
  /** Its text was kept (Python, requirements, scripts); a CUDA source is only listed. */
  hasText: boolean;
  /** The migration proposes a change to this file. */
  changed: boolean;
  /** The proposed text parses (a file whose rewrite would not parse is never proposed). */
  parses: boolean;
  review: ReviewState;
  /**
   * An edited file: how many of the proposal's changes its reviewed text takes (a file accepted
   * change by change, part way, has accepted < total).
   */
  changes?: { accepted: number; total: number };
  appliedAt: IsoTime | null;
}

export interface CodeScanSummary {
  id: number;
  sessionId: number | null;
  root: string;
  mode: FixMode;
  files: number;
  lines: number;
  counts: Record<Severity, number>;
  effort: Effort;
  /** Files that could not be read or parsed cleanly (scans stored before: English text). */
  warnings: Text[];
  /** Files left out as not text (NUL bytes): neither their lines nor findings count. */
  skipped: string[];
  /** Files with a proposed change, by the review's decision (applied files counted apart). */
  reviewed: {
    changed: number;
    accepted: number;
    edited: number;
    rejected: number;
    applied: number;
    /** Of the accepted ones (applied or not), those taken in part or edited by hand. */
    inPart: number;
  };
  createdAt: IsoTime;
}

export interface CodeScanRecord extends CodeScanSummary {
  fileList: CodeFileEntry[];
  findings: CodeFinding[];
}

export interface CodeFileContent {
  file: string;
  original: string;
  /** The analyzer's proposal (equal to original when it proposes nothing). */
  proposed: string;
  /**
   * The reviewer's own text (an edited review); null when the review took the proposal or the
   * original as they are (a file's findings are in its scan record, `code.get`).
   */
  reviewed: string | null;
  review: ReviewState;
  /**
   * The proposal's changes the review rejected one by one, by their original lines (`12:14`;
   * `30:0` for lines added after line 30): reopened, they show rejected, not undecided.
   */
  rejected: string[];
  /**
   * The changes from `original` to the text the review shows: the reviewer's, else the original
   * for a rejected file, else the proposal.
   */
  diff: DiffChange[];
}

/**
 * One changed block, as Monaco's diff worker describes it: original lines [start, end), modified
 * lines [start, end), and the changed character ranges inside (original start line, column, end
 * line, column, then the same on the modified side).
 */
export type DiffChange = [
  number,
  number,
  number,
  number,
  [number, number, number, number, number, number, number, number][],
];

/** A scan that is only read, not stored (`code.analyze`): what `amw scan` prints. */
export interface CodeAnalysis {
  root: string;
  files: number;
  lines: number;
  findings: CodeFinding[];
  effort: Effort;
  /** Files that could not be read or parsed cleanly (findings there may be incomplete). */
  warnings: Text[];
  /** Files not analysed and why (not text): neither their lines nor findings count. */
  skipped: { file: string; reason: string }[];
  /**
   * With `migrate`: every file the migration changes, before and after; `parses: false` where
   * the migrated text would not parse (such a file is never written).
   */
  changed?: { file: string; before: string; after: string; parses: boolean }[];
}

export interface ApplyResult {
  applied: string[];
  /** Where the originals were copied before anything was written. */
  backupDir: string;
}

const ScanId = z.number().int().positive();
/** A path inside the scan, as the scan listed it (never resolved against anything else). */
const RelFile = z.string().min(1).max(4096);
/** Reviewed text travels in one request; the wire caps requests at 1 MiB. */
const ReviewText = z.string().max(900_000);

export const codeApi = {
  /** Scans a local folder as a job; with a session, it is that session's code stage run. */
  'code.scan': method(
    z
      .object({
        path: z.string().min(1).max(4096),
        mode: z.enum(FIX_MODES).default('rewrite'),
        sessionId: z.number().int().positive().optional(),
        exclude: z.array(z.string().min(1).max(400)).max(100).optional(),
      })
      .strict(),
  ).returns<JobStarted & { stageRunId: number | null }>(),
  /**
   * Scans a local folder and answers with the findings, storing nothing: memory stays bounded
   * by the largest file unless `migrate` asks for the migrated texts (in `mode`).
   */
  'code.analyze': method(
    z
      .object({
        path: z.string().min(1).max(4096),
        mode: z.enum(FIX_MODES).default('rewrite'),
        exclude: z.array(z.string().min(1).max(400)).max(100).optional(),
        migrate: z.boolean().default(false),
        /** The findings' messages in this language (default: the settings' language). */
        lang: Language.optional(),
      })
      .strict(),
  ).returns<CodeAnalysis>(),
  'code.scans': method(
    z.object({ sessionId: z.number().int().positive().optional() }).strict(),
  ).returns<CodeScanSummary[]>(),
  'code.get': method(z.object({ scanId: ScanId }).strict()).returns<CodeScanRecord>(),
  'code.file': method(
    z.object({ scanId: ScanId, file: RelFile }).strict(),
  ).returns<CodeFileContent>(),
  /** Records a reviewer's decision on one file; `text` is the reviewed text for accepted/edited. */
  'code.review': method(
    z
      .object({
        scanId: ScanId,
        file: RelFile,
        review: z.enum(REVIEW_STATES),
        text: ReviewText.optional(),
        /** The changes rejected one by one (CodeFileContent.rejected); kept for pending/edited. */
        rejected: z
          .array(z.string().regex(/^\d{1,7}:\d{1,7}$/))
          .max(100_000)
          .optional(),
      })
      .strict(),
  ).returns<CodeFileEntry>(),
  /** The unified patch of every accepted or edited file, `git apply`-able from the root. */
  'code.patch': method(z.object({ scanId: ScanId }).strict()).returns<{
    patch: string;
    files: string[];
  }>(),
  /**
   * Writes accepted and edited files into the scanned folder, after copying the originals to a
   * backup. Refused (CONFLICT, nothing written) when any of them changed on disk since the scan.
   */
  'code.apply': method(z.object({ scanId: ScanId }).strict()).returns<ApplyResult>(),
};
