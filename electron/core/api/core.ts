import { existsSync, readFileSync, statSync } from 'node:fs';
import { lineDiff } from '../../../shared/diff/line-diff';
import { arch, platform } from 'node:os';
import { isAbsolute, join } from 'node:path';
import type { EventName, EventPayload, Input, MethodName, Output } from '../../../shared/api';
import { AmwError, fromWireError } from '../../../shared/errors';
import { ArtifactStore } from '../db/artifacts';
import { openStore, type Db } from '../db/open';
import { EventBus } from '../events';
import { JobRunner } from '../jobs/runner';
import { backupDatabase } from '../maintenance/backup';
import { checkStore } from '../maintenance/check';
import { appVersion, PRODUCT_NAME, resolveStoreLocation, type StoreLocation } from '../paths';
import { SettingsStore } from '../settings/settings-store';
import { diffJson } from '../hosts/diff';
import { HostKeyPrompts, type HostKeyPolicy } from '../hosts/host-key-prompts';
import { HostService } from '../hosts/host-service';
import { importSshConfig } from '../hosts/import-ssh-config';
import { HostRepository } from '../hosts/repository';
import { LiveSessions } from '../hosts/live-sessions';
import { SecretStore, type SecretCipher } from '../hosts/secrets';
import { SessionRepository } from '../sessions/repository';
import { runEnvStage } from '../stages/run-stage';
import { runCodeScan } from '../stages/code/run-code-stage';
import { compareOps } from '../stages/ops/compare';
import { runOpsStage, storedOps } from '../stages/ops/run-ops-stage';
import { CodeReviewStore } from '../code-review/store';
import { buildReport } from '../reports/build';
import { exportReport } from '../reports/export';
import { printWithChromium, type PrintPdf } from '../reports/pdf';
import { ReviewStore, type ReportSource } from '../reports/review-store';
import type { Inventory, Language } from '../../../shared/api';
import { dispatch, type CallContext, type CallResult, type Handlers } from './registry';

export interface CoreOptions {
  /** Explicit database file (`--db`). */
  db?: string;
  /** Default data dir when neither --db, AMW_DB nor AMW_HOME says otherwise (Electron userData). */
  home?: string;
  env?: NodeJS.ProcessEnv;
  /** better-sqlite3 built for another runtime (Electron's ABI). */
  nativeBinding?: string;
  /** The app's known_hosts (`--known-hosts`, AMW_KNOWN_HOSTS); default `<data dir>/known_hosts`. */
  knownHosts?: string;
  /** Read-only known_hosts files also trusted; default ~/.ssh/known_hosts. */
  userKnownHosts?: string[];
  /** UI: prompt; CLI: accept-new with --accept-new-host-key, else refuse-new. */
  hostKeyPolicy?: HostKeyPolicy;
  /** CLI: the passphrase of encrypted private keys (--passphrase-stdin, AMW_KEY_PASSPHRASE). */
  passphrase?: string;
  /** Electron safeStorage; absent in serve mode and the CLI, which then never store secrets. */
  secretCipher?: SecretCipher;
  /** PDF printing: Electron's printToPDF in the app; the installed Chromium elsewhere. */
  printPdf?: PrintPdf;
}

/** The engine: every capability behind one `call`, every push through one event bus. */
export interface Core {
  readonly location: StoreLocation;
  readonly schemaVersion: number;
  readonly bus: EventBus;
  readonly jobs: JobRunner;
  /** For transports: validated dispatch that never throws. */
  dispatch(method: unknown, input: unknown, ctx: CallContext): Promise<CallResult>;
  /** For in-process callers (CLI, tests): typed, throws AmwError on failure. */
  call<K extends MethodName>(method: K, input: Input<K>, ctx?: CallContext): Promise<Output<K>>;
  on<E extends EventName>(event: E, listener: (payload: EventPayload<E>) => void): () => void;
  close(): Promise<void>;
}

export function createCore(opts: CoreOptions = {}): Core {
  const location = resolveStoreLocation(opts, opts.env ?? process.env);
  const { db, schemaVersion } = openStore(location.dbPath, {
    nativeBinding: opts.nativeBinding,
    location,
  });
  const bus = new EventBus();
  const jobs = new JobRunner(db, bus);
  const settings = new SettingsStore(db);
  const artifacts = new ArtifactStore(db, location.dataDir);
  const env = opts.env ?? process.env;
  const hostRepo = new HostRepository(db);
  const prompts = new HostKeyPrompts(bus, opts.hostKeyPolicy ?? 'prompt', opts.passphrase);
  const hosts = new HostService(
    hostRepo,
    prompts,
    artifacts,
    bus,
    {
      knownHostsFile:
        opts.knownHosts ?? env.AMW_KNOWN_HOSTS ?? join(location.dataDir, 'known_hosts'),
      userKnownHostsFiles: opts.userKnownHosts,
    },
    new SecretStore(db, opts.secretCipher ?? null),
  );
  const live = new LiveSessions(hosts.pool, bus);
  const sessions = new SessionRepository(db);
  const code = new CodeReviewStore(db, artifacts);
  const handlers = buildHandlers({
    code,
    reviews: new ReviewStore(db, artifacts),
    printPdf: opts.printPdf ?? printWithChromium,
    live,
    sessions,
    db,
    bus,
    jobs,
    settings,
    artifacts,
    location,
    schemaVersion,
    hostRepo,
    hosts,
    prompts,
  });

  let closed = false;
  return {
    location,
    schemaVersion,
    bus,
    jobs,
    dispatch: (method, input, ctx) => dispatch(handlers, method, input, ctx),
    async call(method, input, ctx = { transport: 'cli' }) {
      const res = await dispatch(handlers, method, input, ctx);
      if (!res.ok) throw fromWireError(res.error);
      return res.value as Output<typeof method>;
    },
    on: (event, listener) => bus.on(event, listener),
    async close() {
      if (closed) return;
      closed = true;
      await jobs.stopAll();
      live.closeAll();
      hosts.pool.closeAll();
      db.close();
    },
  };
}

interface Services {
  db: Db;
  bus: EventBus;
  jobs: JobRunner;
  settings: SettingsStore;
  artifacts: ArtifactStore;
  location: StoreLocation;
  schemaVersion: number;
  hostRepo: HostRepository;
  hosts: HostService;
  prompts: HostKeyPrompts;
  live: LiveSessions;
  sessions: SessionRepository;
  code: CodeReviewStore;
  reviews: ReviewStore;
  printPdf: PrintPdf;
}

function buildHandlers(s: Services): Handlers {
  const readArtifact = (sha: string) => readFileSync(s.artifacts.pathOf(sha), 'utf8');
  /** A session's report is built fresh; an imported one is read back as it came. */
  const report = (source: ReportSource, language: Language | undefined, hideNames: boolean) =>
    'importId' in source
      ? s.reviews.importedReport(source.importId, readArtifact)
      : buildReport(
          {
            db: s.db,
            sessions: s.sessions,
            hostRepo: s.hostRepo,
            hosts: s.hosts,
            code: s.code,
            reviews: s.reviews,
            readArtifact,
          },
          source.sessionId,
          { language: language ?? s.settings.get().language, hideNames },
        );
  return {
    'app.info': () => ({
      name: PRODUCT_NAME,
      version: appVersion(),
      schemaVersion: s.schemaVersion,
      dataDir: s.location.dataDir,
      dbPath: s.location.dbPath,
      platform: `${platform()}-${arch()}`,
      node: process.versions.node,
      canRememberSecrets: s.hosts.secrets.available,
    }),
    'settings.get': () => s.settings.get(),
    'settings.set': (patch) => {
      const next = s.settings.set(patch);
      s.bus.emit('settings.changed', next);
      return next;
    },
    'jobs.list': (input) => s.jobs.list(input),
    'jobs.get': ({ id }) => s.jobs.get(id),
    'jobs.cancel': ({ id }) => s.jobs.cancel(id),
    'maintenance.backup': () => ({
      jobId: s.jobs.start('maintenance.backup', {}, (ctx) =>
        backupDatabase(s.db, s.location.dataDir, ctx),
      ).id,
    }),
    'maintenance.check': () => ({
      jobId: s.jobs.start('maintenance.check', {}, (ctx) => checkStore(s.db, s.artifacts, ctx)).id,
    }),
    'hosts.list': ({ group }) => s.hostRepo.summaries(group),
    'hosts.get': ({ name }) => {
      const found = s.hostRepo.summaries().find((h) => h.name === name);
      return found ?? { ...s.hostRepo.get(name), inventory: null, savedSecret: false };
    },
    'hosts.add': (input) => {
      const host = s.hostRepo.add(input);
      s.bus.emit('hosts.changed', { name: host.name });
      return host;
    },
    'hosts.update': ({ name, patch }) => {
      const host = s.hostRepo.update(name, patch);
      s.bus.emit('hosts.changed', { name: host.name });
      return host;
    },
    'hosts.remove': ({ name }) => {
      s.hostRepo.remove(name);
      s.bus.emit('hosts.changed', { name });
      return { removed: name };
    },
    'hosts.importSshConfig': (input) => {
      const result = importSshConfig(s.hostRepo, input);
      for (const name of [...result.added, ...result.updated])
        s.bus.emit('hosts.changed', { name });
      return result;
    },
    'hosts.test': ({ name, password }) => s.hosts.test(name, password),
    'hosts.rememberPassword': ({ name, password }) => {
      s.hosts.secrets.remember(s.hostRepo.get(name).id, password);
      s.bus.emit('hosts.changed', { name });
      return { ok: true as const };
    },
    'hosts.forgetPassword': ({ name }) => {
      s.hosts.secrets.forget(s.hostRepo.get(name).id);
      s.bus.emit('hosts.changed', { name });
      return { ok: true as const };
    },
    'hosts.answerSecret': ({ promptId, secret }) => {
      s.prompts.answerSecret(promptId, secret);
      return { ok: true as const };
    },
    'hosts.answerHostKey': ({ promptId, accept }) => {
      s.prompts.answer(promptId, accept);
      return { ok: true as const };
    },
    'inventory.take': ({ name, password }) => {
      s.hostRepo.get(name); // NOT_FOUND now, not inside the job
      return {
        jobId: s.jobs.start('inventory', { host: name }, (ctx) =>
          s.hosts.inventory(name, ctx, password),
        ).id,
      };
    },
    'inventory.list': ({ name }) => s.hostRepo.inventories(name),
    'inventory.get': ({ id }) => s.hostRepo.inventory(id),
    'inventory.diff': ({ a, b }) =>
      diffJson(
        stripVolatile(s.hostRepo.inventory(a).data),
        stripVolatile(s.hostRepo.inventory(b).data),
      ),
    'fleet.inventory': ({ names, group }) => {
      const targets = names ?? s.hostRepo.list(group).map((h) => h.name);
      targets.forEach((n) => s.hostRepo.get(n));
      return {
        jobId: s.jobs.start('fleet.inventory', { hosts: targets }, (ctx) =>
          s.hosts.fleetInventory(targets, ctx),
        ).id,
      };
    },
    'fleet.table': ({ group }) => s.hosts.fleetTable(group),
    'monitor.start': async ({ name, intervalSec, password }) => ({
      monitorId: await s.live.startMonitor(
        name,
        s.hosts.target(name),
        s.hosts.connectOptions(name, password),
        intervalSec,
      ),
    }),
    'monitor.stop': ({ monitorId }) => {
      s.live.stopMonitor(monitorId);
      return { ok: true as const };
    },
    'terminal.open': async ({ name, cols, rows, password }) => ({
      terminalId: await s.live.openTerminal(
        s.hosts.target(name),
        s.hosts.connectOptions(name, password),
        cols,
        rows,
      ),
    }),
    'terminal.input': ({ terminalId, data }) => {
      s.live.input(terminalId, data);
      return { ok: true as const };
    },
    'terminal.resize': ({ terminalId, cols, rows }) => {
      s.live.resize(terminalId, cols, rows);
      return { ok: true as const };
    },
    'terminal.close': ({ terminalId }) => {
      s.live.closeTerminal(terminalId);
      return { ok: true as const };
    },
    'projects.create': (p) => s.sessions.createProject(p),
    'projects.list': () => s.sessions.projects(),
    'sessions.create': (o) => {
      o.hosts?.forEach((h) => s.hostRepo.get(h));
      return s.sessions.session(s.sessions.createSession(o));
    },
    'sessions.list': ({ project }) => s.sessions.sessions(project),
    'sessions.get': ({ id }) => s.sessions.session(id),
    'stages.run': (input) => {
      const { host, stage, sessionId, project, checks, password } = input;
      const hostRecord = s.hostRepo.get(host);
      if (stage === 'ops' && !input.entry === !input.script)
        throw new AmwError(
          'VALIDATION',
          'The ops stage needs either an entry (FILE:FUNCTION returning (model, batches)) or a script.',
        );
      const sid = sessionId ?? s.sessions.createSession({ project, host });
      const deps = { hosts: s.hosts, sessions: s.sessions, artifacts: s.artifacts, db: s.db };
      let runId = 0;
      const job = s.jobs.start(`stage.${stage}`, { host, sessionId: sid }, (ctx) =>
        stage === 'ops'
          ? runOpsStage(deps, host, runId, input, ctx, password).then(() => s.sessions.run(runId))
          : runEnvStage(deps, host, runId, ctx, password, checks),
      );
      // the run row exists before the job body starts (the runner defers the body by a tick)
      runId = s.sessions.startRun(sid, stage, hostRecord.id, host, job.id);
      return { jobId: job.id, sessionId: sid, stageRunId: runId };
    },
    'checks.waive': ({ sessionId, checkId, host, reason, by }) => {
      s.sessions.waive(sessionId, s.hostRepo.get(host).id, checkId, reason, by);
      return { ok: true as const };
    },
    'checks.unwaive': ({ sessionId, checkId, host }) => {
      s.sessions.unwaive(sessionId, s.hostRepo.get(host).id, checkId);
      return { ok: true as const };
    },
    'sessions.compare': ({ a, b }) => s.sessions.compare(a, b),
    'code.scan': ({ path, mode, sessionId, exclude }) => {
      if (!isAbsolute(path) || !existsSync(path) || !statSync(path).isDirectory())
        throw new AmwError('NOT_FOUND', `${path} is not a folder (give an absolute path).`, {
          path,
        });
      if (sessionId) s.sessions.session(sessionId);
      const lang = s.settings.get().language;
      let runId: number | null = null;
      const job = s.jobs.start('code.scan', { path, sessionId: sessionId ?? null }, (ctx) =>
        runCodeScan(
          { store: s.code, sessions: s.sessions },
          { path, mode, exclude, sessionId: sessionId ?? null },
          runId,
          lang,
          ctx,
        ),
      );
      // the run row exists before the job body starts (the runner defers the body by a tick)
      if (sessionId) runId = s.sessions.startLocalRun(sessionId, 'code', job.id);
      return { jobId: job.id, stageRunId: runId };
    },
    'ops.get': ({ stageRunId, torchNpu }) => ({
      ...storedOps(s.db, readArtifact, stageRunId, torchNpu),
      host: s.sessions.run(stageRunId).host,
    }),
    'ops.compare': ({ a, b, torchNpuA, torchNpuB }) =>
      compareOps(
        storedOps(s.db, readArtifact, a, torchNpuA),
        storedOps(s.db, readArtifact, b, torchNpuB),
      ),
    'reports.build': ({ source, language, hideNames }) => report(source, language, hideNames),
    'reports.export': ({ source, format, language, hideNames }) =>
      exportReport(report(source, language, hideNames), format, s.printPdf),
    'reports.import': ({ json }) => s.reviews.import(json),
    'reports.imported': () => s.reviews.importedList(),
    'reports.comment': ({ source, target, author, text }) => {
      s.reviews.comment(source, target, author, text);
      return { ok: true as const };
    },
    'reports.decide': ({ source, decision, by, note }) => {
      s.reviews.decide(source, decision, by, note);
      return { ok: true as const };
    },
    'code.scans': ({ sessionId }) => s.code.list(sessionId),
    'code.get': ({ scanId }) => s.code.get(scanId),
    'code.file': ({ scanId, file }) => {
      const content = s.code.file(scanId, file);
      const shown =
        content.reviewed ?? (content.review === 'rejected' ? content.original : content.proposed);
      return { ...content, diff: lineDiff(content.original, shown) };
    },
    'code.review': ({ scanId, file, review, text }) => s.code.review(scanId, file, review, text),
    'code.patch': ({ scanId }) => s.code.patch(scanId),
    'code.apply': ({ scanId }) => s.code.apply(scanId, join(s.location.dataDir, 'backups')),
  };
}

/** Two snapshots differ in time and host by nature; the diff is about what the machines have. */
function stripVolatile(inv: Inventory): Omit<Inventory, 'takenAt' | 'host'> {
  const { takenAt: _t, host: _h, ...rest } = inv;
  return rest;
}
