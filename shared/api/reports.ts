import { z } from 'zod';
import { method } from './define';

/**
 * The report document (`amw.report/v1`): one evidence chain per session, readable offline. It is
 * the JSON export as is, the source of every other format, and what an import reads back; the
 * JSON Schema in docs/report.schema.json is generated from this definition.
 */
export const REPORT_SCHEMA_ID = 'amw.report/v1';

const Text = z.string();
const Status = z.enum(['pass', 'warn', 'fail', 'skip', 'error']);
const StageStatus = z.enum([
  'running',
  'pass',
  'warn',
  'fail',
  'error',
  'cancelled',
  'interrupted',
]);

export const ReportCheck = z.object({
  id: z.string(),
  title: Text,
  status: Status,
  summary: Text,
  remediation: Text.nullable(),
  evidence: z.unknown(),
  waiver: z.object({ reason: z.string(), by: z.string(), at: z.string() }).nullable(),
});

export const ReportStage = z.object({
  stage: z.string(),
  host: z.string(),
  status: StageStatus,
  startedAt: z.string(),
  finishedAt: z.string().nullable(),
  checks: z.array(ReportCheck),
});

export const ReportInventory = z.object({
  host: z.string(),
  takenAt: z.string().nullable(),
  chip: z.string().nullable(),
  chipCount: z.number(),
  health: z.string().nullable(),
  cann: z.string().nullable(),
  driver: z.string().nullable(),
  firmware: z.string().nullable(),
  python: z.string().nullable(),
  torch: z.string().nullable(),
  torchNpu: z.string().nullable(),
  /** Fields where this host differs from the others of its group. */
  differs: z.array(z.string()),
});

export const ReportFinding = z.object({
  ruleId: z.string(),
  file: z.string(),
  line: z.number(),
  column: z.number(),
  endLine: z.number(),
  endColumn: z.number(),
  severity: z.enum(['error', 'warning', 'info']),
  category: z.string(),
  message: z.string(),
});

export const ReportCode = z.object({
  scanId: z.number(),
  root: z.string(),
  mode: z.string(),
  files: z.number(),
  lines: z.number(),
  counts: z.object({ error: z.number(), warning: z.number(), info: z.number() }),
  effort: z.object({
    level: z.string(),
    dimensions: z.record(z.string(), z.number()),
    notes: z.array(z.string()),
  }),
  findings: z.array(ReportFinding),
  /** Accepted or edited files as unified diffs, and the review state of every changed file. */
  diffs: z.array(
    z.object({ file: z.string(), review: z.string(), applied: z.boolean(), patch: z.string() }),
  ),
  history: z.array(
    z.object({
      scanId: z.number(),
      at: z.string(),
      error: z.number(),
      warning: z.number(),
      info: z.number(),
    }),
  ),
});

export const ReportOps = z.object({
  host: z.string(),
  entry: z.string(),
  targetTorchNpu: z.string(),
  opList: z.string(),
  breakdown: z.object({
    direct: z.number(),
    needsChange: z.number(),
    cpuFallback: z.number(),
    unsupported: z.number(),
  }),
  ops: z.array(
    z.object({
      op: z.string(),
      overload: z.string(),
      count: z.number(),
      class: z.string(),
      dynamic: z.boolean(),
      reason: z.string(),
      replacement: z.string().nullable(),
      where: z.string().nullable(),
    }),
  ),
  error: z.string().nullable(),
});

export const ReportComment = z.object({
  id: z.number(),
  /** `session`, `check:<id>@<host>`, `finding:<rule>@<file>:<line>` */
  target: z.string(),
  author: z.string(),
  text: z.string(),
  at: z.string(),
});

export const ReportDecision = z.object({
  id: z.number(),
  decision: z.enum(['approve', 'changes-requested']),
  by: z.string(),
  note: z.string(),
  at: z.string(),
});

export const Report = z.object({
  schema: z.literal(REPORT_SCHEMA_ID),
  generatedAt: z.string(),
  generator: z.object({ name: z.string(), version: z.string() }),
  language: z.enum(['en', 'zh-CN']),
  /** Host and user names replaced by neutral labels in this export. */
  namesHidden: z.boolean(),
  session: z.object({
    id: z.number(),
    title: z.string(),
    project: z.string().nullable(),
    codeCommit: z.string().nullable(),
    createdAt: z.string(),
    hosts: z.array(z.string()),
  }),
  summary: z.object({
    readiness: z.enum(['ready', 'blocked', 'in-progress', 'not-started']),
    stages: z.array(
      z.object({
        stage: z.string(),
        /** The stage's name in the report's language (older exports: absent). */
        name: z.string().optional(),
        /** A run status, or `not-run`, or `not-built` (a stage this build does not have). */
        status: z.string(),
        hosts: z.array(z.object({ host: z.string(), status: StageStatus })),
      }),
    ),
    blocking: z.array(
      z.object({
        stage: z.string(),
        host: z.string(),
        check: z.string(),
        title: z.string(),
        summary: z.string(),
      }),
    ),
    waivers: z.array(
      z.object({
        stage: z.string(),
        host: z.string(),
        check: z.string(),
        reason: z.string(),
        by: z.string(),
        at: z.string(),
      }),
    ),
  }),
  inventories: z.array(ReportInventory),
  stages: z.array(ReportStage),
  code: ReportCode.nullable(),
  ops: z.array(ReportOps),
  changes: z
    .object({
      previousSessionId: z.number(),
      improved: z.array(
        z.object({
          check: z.string(),
          host: z.string(),
          from: z.string().nullable(),
          to: z.string().nullable(),
        }),
      ),
      regressed: z.array(
        z.object({
          check: z.string(),
          host: z.string(),
          from: z.string().nullable(),
          to: z.string().nullable(),
        }),
      ),
    })
    .nullable(),
  review: z.object({ comments: z.array(ReportComment), decisions: z.array(ReportDecision) }),
});
export type Report = z.infer<typeof Report>;

export const REPORT_FORMATS = ['html', 'md', 'json', 'pdf', 'sarif', 'junit'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

/** A report is a session's (live) or an imported one (read-only, for teammates without hosts). */
const Source = z.union([
  z.object({ sessionId: z.number().int().positive() }).strict(),
  z.object({ importId: z.number().int().positive() }).strict(),
]);

export interface ImportedReport {
  id: number;
  title: string;
  sessionId: number;
  generatedAt: string;
  importedAt: string;
}

export const reportsApi = {
  'reports.build': method(
    z
      .object({
        source: Source,
        language: z.enum(['en', 'zh-CN']).optional(),
        hideNames: z.boolean().default(false),
      })
      .strict(),
  ).returns<Report>(),
  /** Renders a format; binary formats (pdf) come base64-encoded. */
  'reports.export': method(
    z
      .object({
        source: Source,
        format: z.enum(REPORT_FORMATS),
        language: z.enum(['en', 'zh-CN']).optional(),
        hideNames: z.boolean().default(false),
      })
      .strict(),
  ).returns<{ fileName: string; mediaType: string; text?: string; base64?: string }>(),
  'reports.import': method(
    z.object({ json: z.string().min(2).max(900_000) }).strict(),
  ).returns<ImportedReport>(),
  'reports.imported': method(z.object({}).strict()).returns<ImportedReport[]>(),
  'reports.comment': method(
    z
      .object({
        source: Source,
        target: z.string().min(1).max(400),
        author: z.string().trim().min(1).max(120),
        text: z.string().trim().min(1).max(4000),
      })
      .strict(),
  ).returns<{ ok: true }>(),
  'reports.decide': method(
    z
      .object({
        source: Source,
        decision: z.enum(['approve', 'changes-requested']),
        by: z.string().trim().min(1).max(120),
        note: z.string().max(4000).default(''),
      })
      .strict(),
  ).returns<{ ok: true }>(),
};
