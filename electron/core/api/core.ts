import { arch, platform } from 'node:os';
import type { EventName, EventPayload, Input, MethodName, Output } from '../../../shared/api';
import { fromWireError } from '../../../shared/errors';
import { ArtifactStore } from '../db/artifacts';
import { openStore, type Db } from '../db/open';
import { EventBus } from '../events';
import { JobRunner } from '../jobs/runner';
import { backupDatabase } from '../maintenance/backup';
import { checkStore } from '../maintenance/check';
import { appVersion, PRODUCT_NAME, resolveStoreLocation, type StoreLocation } from '../paths';
import { SettingsStore } from '../settings/settings-store';
import { dispatch, type CallContext, type CallResult, type Handlers } from './registry';

export interface CoreOptions {
  /** Explicit database file (`--db`). */
  db?: string;
  /** Default data dir when neither --db, AMW_DB nor AMW_HOME says otherwise (Electron userData). */
  home?: string;
  env?: NodeJS.ProcessEnv;
  /** better-sqlite3 built for another runtime (Electron's ABI). */
  nativeBinding?: string;
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
  const { db, schemaVersion } = openStore(location.dbPath, { nativeBinding: opts.nativeBinding });
  const bus = new EventBus();
  const jobs = new JobRunner(db, bus);
  const settings = new SettingsStore(db);
  const artifacts = new ArtifactStore(db, location.dataDir);
  const handlers = buildHandlers({ db, bus, jobs, settings, artifacts, location, schemaVersion });

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
}

function buildHandlers(s: Services): Handlers {
  return {
    'app.info': () => ({
      name: PRODUCT_NAME,
      version: appVersion(),
      schemaVersion: s.schemaVersion,
      dataDir: s.location.dataDir,
      dbPath: s.location.dbPath,
      platform: `${platform()}-${arch()}`,
      node: process.versions.node,
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
  };
}
