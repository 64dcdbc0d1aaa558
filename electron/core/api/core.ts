import { join } from 'node:path';
import type { EventName, EventPayload, Input, MethodName, Output } from '../../../shared/api';
import { composeDomains, LOCAL_HOST_NAME, METHOD_NAMES } from '../../../shared/api';
import { fromWireError } from '../../../shared/errors';
import { ArtifactStore } from '../db/artifacts';
import { openStore } from '../db/open';
import { EventBus } from '../events';
import { JobRunner } from '../jobs/runner';
import { loadKnowledge } from '../knowledge/load';
import { resolveStoreLocation, type StoreLocation } from '../paths';
import { SettingsStore } from '../settings/settings-store';
import { HostKeyPrompts, type HostKeyPolicy } from '../hosts/host-key-prompts';
import { HostService } from '../hosts/host-service';
import { HostRepository } from '../hosts/repository';
import { LiveSessions } from '../hosts/live-sessions';
import { SecretStore, type SecretCipher } from '../hosts/secrets';
import { SessionRepository } from '../sessions/repository';
import { STAGE_DEFINITIONS, stageDefinition } from '../stages/registry';
import { CodeReviewStore } from '../code-review/store';
import { printWithChromium, type PrintPdf } from '../reports/pdf';
import { ReviewStore } from '../reports/review-store';
import { doctorHandlers } from './doctor-handlers';
import { dispatch, type CallContext, type CallResult, type Handlers } from './registry';
import type { Services } from './services';
import { appHandlers } from './handlers/app';
import { hostsHandlers } from './handlers/hosts';
import { liveHandlers } from './handlers/live';
import { sessionsHandlers } from './handlers/sessions';
import { stagesHandlers } from './handlers/stages';
import { reportsHandlers } from './handlers/reports';

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
  // `local` appears the first time anyone names it: host lists shown anywhere refresh then
  const hostRepo = new HostRepository(db, () =>
    bus.emit('hosts.changed', { name: LOCAL_HOST_NAME }),
  );
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
  const sessions = new SessionRepository(db, (id) => stageDefinition(id)?.merge ?? 'by-check');
  const code = new CodeReviewStore(db, artifacts);
  const handlers = composeHandlers({
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
    knowledge: () => loadKnowledge(),
    language: () => settings.get().language,
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

/**
 * One handler module per domain, plus each stage's own; a method two of them define is refused
 * (as the contract refuses it), so nothing is shadowed silently.
 */
function composeHandlers(s: Services): Handlers {
  const parts: Partial<Handlers>[] = [
    appHandlers(s),
    hostsHandlers(s),
    liveHandlers(s),
    sessionsHandlers(s),
    stagesHandlers(s),
    reportsHandlers(s),
    doctorHandlers(s),
    ...STAGE_DEFINITIONS.map((d) => d.handlers?.(s) ?? {}),
  ];
  const all = composeDomains(...(parts as Record<string, unknown>[])) as Partial<Handlers>;
  const missing = METHOD_NAMES.filter((m) => !all[m]);
  if (missing.length) throw new Error(`No handler for ${missing.join(', ')}`);
  return all as Handlers;
}
