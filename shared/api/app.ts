import { method } from './define';
import { NoInput } from './common';

/** What the running engine is and where it keeps its data. */
export interface AppInfo {
  name: string;
  version: string;
  /** The schema version this build writes (highest migration). */
  schemaVersion: number;
  dataDir: string;
  dbPath: string;
  platform: string;
  node: string;
  /** True only in the desktop app, where Electron safeStorage can encrypt secrets. */
  canRememberSecrets: boolean;
}

export const appApi = {
  'app.info': method(NoInput).returns<AppInfo>(),
};
