import * as z from 'zod';
import { method } from './define';
import { SHARED_STAGES } from '../stages';

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
  /** What the error doctor recognised in a failed check's evidence, in the report's language. */
  diagnosis: z
    .array(
      z.object({
        rule: z.string(),
        title: z.string(),
        cause: z.string(),
        fix: z.string(),
        text: z.string(),
      }),
    )
    .optional(),
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

/** A check run in only one of two sessions compared, named (the other has no card for it). */
const OneSidedCheck = z.object({
  check: z.string(),
  title: z.string(),
  stage: z.string(),
  host: z.string(),
});

const ReportBase = z.object({
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
      // checks run in only one of the two sessions (absent from reports of earlier versions)
      added: z.array(OneSidedCheck.extend({ to: z.string() })).optional(),
      notRun: z.array(OneSidedCheck.extend({ from: z.string() })).optional(),
    })
    .nullable(),
  review: z.object({ comments: z.array(ReportComment), decisions: z.array(ReportDecision) }),
});

type WithReport = Extract<(typeof SHARED_STAGES)[number], { report: object }>;
type StageSections = {
  [S in WithReport as S['report']['key']]: S['report']['schema'];
};

/** The document: the common parts and each stage's own section, under the key it names. */
export const Report = ReportBase.extend(
  Object.fromEntries(
    SHARED_STAGES.flatMap((st) =>
      'report' in st && st.report ? [[st.report.key, st.report.schema]] : [],
    ),
  ) as StageSections,
);
export type Report = z.infer<typeof Report>;
/** The stages' own sections of the document (by the key each stage names). */
export type ReportSections = Omit<Report, keyof z.infer<typeof ReportBase>>;

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
