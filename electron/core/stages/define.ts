import type { CheckOutcome, Language, StageRunRecord, Text } from '../../../shared/api';
import type { Translate } from '../../../shared/i18n';
import type { SharedStage } from '../../../shared/stages/define';
import type { StageId, StageInputOf } from '../../../shared/stages';
import type { ArtifactStore } from '../db/artifacts';
import type { Db } from '../db/open';
import type { CodeReviewStore } from '../code-review/store';
import type { HostService } from '../hosts/host-service';
import type { HostRepository } from '../hosts/repository';
import type { JobContext } from '../jobs/runner';
import type { Knowledge } from '../knowledge/load';
import type { SessionRepository } from '../sessions/repository';
import type { Services } from '../api/services';
import type { Handlers } from '../api/registry';
import type { Input, MethodName, Output } from '../../../shared/api';

/** What a stage may use: the engine's services, never another stage's internals. */
export interface StageServices {
  db: Db;
  hosts: HostService;
  hostRepo: HostRepository;
  sessions: SessionRepository;
  artifacts: ArtifactStore;
  code: CodeReviewStore;
  knowledge: () => Knowledge;
  /** The user's language now (the analyzer still words findings at scan time). */
  language: () => Language;
}

/** One run of a stage, as its body sees it; `runStage()` owns the run row and how it ends. */
export interface StageRun<I> {
  input: I;
  /** The host it runs on (runsOn `host`), the hosts (`hosts`), or none (`local`). */
  host: string | null;
  hosts: string[];
  sessionId: number;
  runId: number;
  job: JobContext;
  services: StageServices;
}

export interface StageOutput {
  outcomes: CheckOutcome[];
  /** The job's result when a caller needs more than the run record (the code stage's scan id). */
  result?: unknown;
}

/** A check: an id and title (messages), and a pure evaluator over a stage's facts. */
export interface CheckDef<Facts, K = Knowledge> {
  id: string;
  title: Text;
  evaluate(facts: Facts, knowledge: K): Omit<CheckOutcome, 'id' | 'title' | 'waiver'>;
}

/**
 * A stage: what both sides know of it (`shared`: id, where it runs, its input, its messages),
 * how it runs, and how a rerun merges into the session's view of it.
 */
export interface StageDefinition<Id extends StageId = StageId> {
  shared: SharedStage<Id>;
  /**
   * Checks and completes the input before anything is stored or started (throws VALIDATION or
   * NOT_FOUND): the caller hears at once, not from a failed job.
   */
  prepare?(input: StageInputOf<Id>, services: StageServices): StageInputOf<Id>;
  run(run: StageRun<StageInputOf<Id>>): Promise<StageOutput>;
  /**
   * `by-check`: a rerun of some checks replaces just those (env: `--checks`); `replace`: the newest
   * finished run stands for the stage (code: a scan sees the whole tree).
   */
  merge: 'by-check' | 'replace';
  /** The checks a user may rerun alone; absent: the stage runs whole. */
  checkIds?: readonly string[];
  /** The knowledge versions the stage ships, for `app.info` (the ops stage: its op lists). */
  knowledge?: () => Record<string, unknown>;
  /** The stage's section of a session's report (its key and schema are in `shared.report`). */
  report?: StageReport;
  /** What `amw run --stage <id>` adds: options, and the stage's `--json` document. */
  cli?: StageCli;
  /** Handlers of the stage's own methods (`shared.api`), composed into the engine's. */
  handlers?: (s: Services) => Partial<Handlers>;
  /** Columns of the stage's own tables that hold a host's name: a renamed host's follows there. */
  hostColumns?: readonly HostColumn[];
}

/**
 * A table column that holds a host's name (the whole value, never a list), on rows `where` says
 * (SQL from code, never from data). `runColumn` is the row's stage run: with `scope: 'runs'` a
 * row follows a rename when its run does (the run's own host); with `'since'` when its run
 * started after the host's row was made (another host than the run's, as a precision baseline).
 */
export interface HostColumn {
  table: string;
  column: string;
  runColumn: string;
  scope: 'runs' | 'since';
  where?: string;
}

export function defineStage<Id extends StageId>(d: StageDefinition<Id>): StageDefinition<Id> {
  return d;
}

/** A stage's part of `amw run`: its own options and, if it has one, its `--json` document. */
export interface StageCli {
  /** commander flags (`--entry <file:function>`), the option's key, and its help text key. */
  options: { flags: string; key: string; help: string }[];
  /** The stage's fields of `stages.run` from the parsed options. */
  input(opts: Record<string, unknown>): Record<string, unknown>;
  /**
   * The `--json` document, given the finished run (checks already rendered in the CLI's
   * language) and the engine's typed `call`; absent: the common `{session, stage, host, …}`.
   * `show` renders engine text in the CLI's language (`--lang`), as the checks already are.
   */
  json?(
    run: StageJson,
    call: <K extends MethodName>(m: K, i: Input<K>) => Promise<Output<K>>,
    stageRunId: number,
    show: (text: Text | null | undefined) => string,
  ): Promise<object>;
  /** The stage's own commands (`amw precision import …`), registered by the CLI from this list. */
  commands?: StageCommand[];
  /** Help text keys of the commands' group words (`profile`); absent: the stage's name. */
  groups?: Record<string, string>;
}

/** A command of a stage's own: its words, arguments and options, and what it does. */
export interface StageCommand {
  /** `['precision', 'import']` is `amw precision import`. */
  path: string[];
  /** commander argument specs (`<path>`). */
  args: string[];
  /** i18n key of its help text. */
  help: string;
  options: { flags: string; key: string; help: string }[];
  /** It reaches hosts: it takes `--password-stdin`, `--accept-new-host-key`, `--passphrase-stdin`. */
  hostAccess?: boolean;
  /**
   * Does the work through the engine's `call` (the engine opens on the first call: a command
   * that reads only local files never touches the data dir); returns the `--json` document, the
   * text, and the status deciding the exit code (`error`, `fail`; anything else exits 0).
   */
  run(
    args: string[],
    opts: Record<string, unknown>,
    call: <K extends MethodName>(m: K, i: Input<K>) => Promise<Output<K>>,
    show: (text: Text | null | undefined) => string,
    ctx: StageCommandContext,
  ): Promise<{ json: object; text: string; status: string }>;
}

/** What the CLI lends a stage's command besides `call`. */
export interface StageCommandContext {
  /** Waits for a job the command started (progress to stderr when asked; Ctrl+C cancels it). */
  wait(jobId: string, progress?: boolean): Promise<unknown>;
  /** A line for stderr (where the run is stored, say), kept off the `--json` document. */
  note(line: string): void;
  /** `--password-stdin`'s password, read once (undefined without the flag). */
  password(): Promise<string | undefined>;
}

/** `amw run --json`: a run with its checks in the CLI's language. */
export interface StageJson {
  session: number;
  stage: string;
  host: string;
  status: string;
  checks: {
    id: string;
    title: string;
    status: string;
    summary: string;
    evidence: unknown;
    remediation: string | null;
    waiver?: unknown;
  }[];
}

/** What a stage's report section is built from: the session's runs and the engine's stores. */
export interface ReportContext {
  sessionId: number;
  runs: StageRunRecord[];
  services: Pick<StageServices, 'db' | 'artifacts' | 'code' | 'sessions'>;
  /** Engine text in the report's language. */
  show: (text: Text | null | undefined) => string;
}

/** A stage's section of a report: built once into the document, rendered per format. */
export interface StageReport<S = unknown> {
  build(ctx: ReportContext): S;
  /** Self-contained HTML (escape everything; see reports/html-kit.ts). */
  html(section: S, t: Translate): string;
  md(section: S, t: Translate): string;
}
