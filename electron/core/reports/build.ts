import type {
  CheckOutcome,
  Language,
  Report,
  ReportSections,
  SessionRecord,
  StageRunRecord,
} from '../../../shared/api';
import { DOCTOR_RULES_NS, REPORT_SCHEMA_ID } from '../../../shared/api';
import type { CodeReviewStore } from '../code-review/store';
import type { HostService } from '../hosts/host-service';
import type { HostRepository } from '../hosts/repository';
import { appVersion, PRODUCT_NAME } from '../paths';
import type { SessionRepository } from '../sessions/repository';
import type { ReviewStore } from './review-store';
import type { Db } from '../db/open';
import type { ArtifactStore } from '../db/artifacts';
import type { Knowledge } from '../knowledge/load';
import { textIn } from '../i18n';
import { msg } from '../../../shared/api/text';
import { stageNs } from '../../../shared/stages';
import { STAGE_DEFINITIONS } from '../stages/registry';
import { redactReport } from './redact';

export interface ReportDeps {
  db: Db;
  sessions: SessionRepository;
  hostRepo: HostRepository;
  hosts: HostService;
  code: CodeReviewStore;
  reviews: ReviewStore;
  artifacts: ArtifactStore;
  knowledge: () => Knowledge;
}

const BAD = new Set(['fail', 'error']);

function checkOf(
  c: CheckOutcome,
  show: ReturnType<typeof textIn>,
): Report['stages'][number]['checks'][number] {
  return {
    id: c.id,
    title: show(c.title),
    status: c.status,
    summary: show(c.summary),
    remediation: c.remediation ? show(c.remediation) : null,
    evidence: c.evidence ?? null,
    waiver: c.waiver ?? null,
    ...(c.diagnosis?.length
      ? {
          diagnosis: c.diagnosis.map((d) => ({
            rule: d.rule,
            title: show(msg(`${DOCTOR_RULES_NS}:${d.rule}.title`)),
            cause: show(msg(`${DOCTOR_RULES_NS}:${d.rule}.cause`)),
            fix: show(msg(`${DOCTOR_RULES_NS}:${d.rule}.fix`)),
            text: d.text,
          })),
        }
      : {}),
  };
}

/** Everything a reviewer needs about one session, in one document, in one language. */
export function buildReport(
  deps: ReportDeps,
  sessionId: number,
  opts: { language: Language; hideNames: boolean },
): Report {
  const lang = opts.language;
  const show = textIn(lang);
  const s: SessionRecord = deps.sessions.session(sessionId);
  const runs = s.runs;
  const hosts = [...new Set([...s.hosts, ...runs.map((r) => r.host)])];

  // every stage of a migration in the seeds' order; those this build lacks show as not built
  const { order, names } = deps.knowledge().stages;
  const stages = order.map((stage) => {
    const mine = runs.filter((r) => r.stage === stage);
    const statuses = mine.map((r) => r.status);
    const built = STAGE_DEFINITIONS.some((d) => d.shared.id === stage);
    const status = !built
      ? 'not-built'
      : !mine.length
        ? 'not-run'
        : (statuses.find((x) => BAD.has(x)) ??
          statuses.find((x) => x !== 'pass' && x !== 'warn') ??
          (statuses.includes('warn') ? 'warn' : 'pass'));
    const name = built ? show(msg(`${stageNs(stage)}:name`)) : (names[stage]?.[lang] ?? stage);
    return {
      stage,
      name,
      status,
      hosts: mine.map((r) => ({ host: r.host, status: r.status })),
    };
  });
  const blocking = runs.flatMap((r) =>
    r.checks
      .filter((c) => BAD.has(c.status) && !c.waiver)
      .map((c) => ({
        stage: r.stage,
        host: r.host,
        check: c.id,
        title: show(c.title),
        summary: show(c.summary),
      })),
  );
  const waivers = runs.flatMap((r) =>
    r.checks
      .filter((c) => c.waiver)
      .map((c) => ({ stage: r.stage, host: r.host, check: c.id, ...c.waiver! })),
  );
  // a stage counts as run once a run of it finished with results (not one still running,
  // cancelled or cut short): a session with nothing else has nothing to approve yet
  const FINISHED = new Set(['pass', 'warn', 'fail', 'error']);
  const ran = stages.filter((x) => x.hosts.some((h) => FINISHED.has(h.status)));
  const gate = deps.knowledge().stages.readyWhen;
  const readiness: Report['summary']['readiness'] = !ran.length
    ? 'not-started'
    : blocking.length || ran.some((x) => BAD.has(x.status))
      ? 'blocked'
      : ran.every((x) => x.status === 'pass' || x.status === 'warn') &&
          gate.every((id) => ran.some((x) => x.stage === id))
        ? 'ready'
        : 'in-progress';

  // inventories of the session's hosts, with what differs from the rest of their group
  const fleet = new Map(deps.hosts.fleetTable().map((row) => [row.host.name, row]));
  const inventories = hosts
    .filter((h) => fleet.has(h))
    .map((h) => {
      const row = fleet.get(h)!;
      const inv = row.host.inventory;
      return {
        host: h,
        takenAt: inv?.takenAt ?? null,
        chip: inv?.chip ?? null,
        chipCount: inv?.chipCount ?? 0,
        health: inv?.health ?? null,
        cann: inv?.cann ?? null,
        driver: inv?.driver ?? null,
        firmware: inv?.firmware ?? null,
        python: inv?.python ?? null,
        torch: inv?.torch ?? null,
        torchNpu: inv?.torchNpu ?? null,
        differs: row.differs.map(String),
      };
    });

  const reportStages = runs.map((r: StageRunRecord) => ({
    stage: r.stage,
    host: r.host,
    status: r.status,
    startedAt: r.startedAt,
    finishedAt: r.finishedAt,
    checks: r.checks.map((c) => checkOf(c, show)),
  }));

  // each stage's own section of the document, built by the stage
  const sections = Object.fromEntries(
    STAGE_DEFINITIONS.flatMap((d) =>
      d.report && d.shared.report
        ? [[d.shared.report.key, d.report.build({ sessionId, runs, services: deps, show })]]
        : [],
    ),
  );

  // what changed since the previous session of the same project
  let changes: Report['changes'] = null;
  if (s.project) {
    const previous = deps.sessions
      .sessions(s.project)
      .filter((x) => x.id < s.id)
      .sort((a, b) => b.id - a.id)[0];
    if (previous) {
      const rows = deps.sessions.compare(previous.id, s.id);
      // named here: a check this session did not run has no card in the report to name it
      const oneSided = (change: 'new' | 'gone') =>
        rows
          .filter((r) => r.change === change)
          .map((row) => ({
            row,
            check: { check: row.checkId, title: show(row.title), stage: row.stage, host: row.host },
          }));
      const pick = (change: string) =>
        rows
          .filter((r) => r.change === change)
          .map((r) => ({ check: r.checkId, host: r.host, from: r.a, to: r.b }));
      // a check run in only one of them changed too: "No check changed" beside a comparison
      // listing checks not run read as a contradiction
      changes = {
        previousSessionId: previous.id,
        improved: pick('improved'),
        regressed: pick('regressed'),
        added: oneSided('new').map(({ row, check }) => ({ ...check, to: row.b! })),
        notRun: oneSided('gone').map(({ row, check }) => ({ ...check, from: row.a! })),
      };
    }
  }

  const report: Report = {
    schema: REPORT_SCHEMA_ID,
    generatedAt: new Date().toISOString(),
    generator: { name: PRODUCT_NAME, version: appVersion() },
    language: lang,
    namesHidden: opts.hideNames,
    session: {
      id: s.id,
      title: s.title,
      project: s.project,
      codeCommit: s.codeCommit,
      createdAt: s.createdAt,
      hosts,
    },
    summary: {
      readiness,
      stages: stages.map((x) => ({ ...x, hosts: x.hosts })),
      blocking,
      waivers,
    },
    inventories,
    stages: reportStages,
    ...(sections as ReportSections),
    changes,
    review: deps.reviews.review({ sessionId }),
  };
  return redactReport(report, {
    hideNames: opts.hideNames,
    hosts: hosts.map((h) => {
      try {
        const rec = deps.hostRepo.get(h);
        return { name: h, hostname: rec.hostname, user: rec.username ?? null };
      } catch {
        return { name: h, hostname: null, user: null };
      }
    }),
  });
}
