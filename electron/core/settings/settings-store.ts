import { DEFAULT_SETTINGS, Settings } from '../../../shared/api';
import type { Db } from '../db/open';

/** Settings live as key → JSON rows; unknown or invalid stored values fall back to defaults. */
export class SettingsStore {
  constructor(private readonly db: Db) {}

  get(): Settings {
    const rows = this.db.prepare('SELECT key, value FROM settings').all() as {
      key: string;
      value: string;
    }[];
    const stored: Record<string, unknown> = {};
    for (const row of rows) {
      try {
        stored[row.key] = JSON.parse(row.value);
      } catch {
        // a hand-edited, broken value: ignore it and use the default
      }
    }
    const merged = { ...DEFAULT_SETTINGS };
    for (const key of Object.keys(DEFAULT_SETTINGS) as (keyof Settings)[]) {
      const parsed = Settings.shape[key].safeParse(stored[key]);
      if (parsed.success) (merged as Record<string, unknown>)[key] = parsed.data;
    }
    return merged;
  }

  set(patch: Partial<Settings>): Settings {
    const upsert = this.db.prepare(
      'INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    );
    this.db.transaction(() => {
      for (const [key, value] of Object.entries(patch)) {
        if (value !== undefined) upsert.run(key, JSON.stringify(value));
      }
    })();
    return this.get();
  }
}
