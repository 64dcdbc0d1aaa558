import { method } from './define';
import { NoInput } from './common';
import type { Localized } from './text';
import type { RunsOn } from '../stages/define';
import type { Namespaces } from '../i18n';

/** What the running engine is and where it keeps its data. */
export interface AppInfo {
  name: string;
  version: string;
  /** The schema version this build writes (highest migration). */
  schemaVersion: number;
  dataDir: string;
  dbPath: string;
  /** Where the engine runs: what a relative folder (a scan's, a project's) is read from. */
  workDir: string;
  platform: string;
  node: string;
  /** True only in the desktop app, where Electron safeStorage can encrypt secrets. */
  canRememberSecrets: boolean;
  /**
   * Every stage of a migration in the seeds' order: those this build has (`built`, with where
   * they run) and those it does not yet (named from the knowledge data).
   */
  stages: { id: string; built: boolean; runsOn: RunsOn | null; name: Localized | null }[];
  /** The knowledge versions this build ships. */
  knowledge: {
    /** What each stage ships, by stage id (the ops stage: `{opLists: ["2.1.0", …]}`). */
    stages: Record<string, Record<string, unknown>>;
    /** The version matrix: its newest recommended combination and row count. */
    versionMatrix: { rows: number; recommended: { torchNpu: string; torch: string; cann: string } };
  };
}

export const appApi = {
  'app.info': method(NoInput).returns<AppInfo>(),
  /** Texts that live in knowledge files, as i18next namespaces (rules…), for the UI to load. */
  'app.messages': method(NoInput).returns<Namespaces>(),
};
