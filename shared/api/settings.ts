import * as z from 'zod';
import { event, method } from './define';
import { Language, NoInput, Theme } from './common';

export const Settings = z.object({
  language: Language,
  theme: Theme,
});
export type Settings = z.infer<typeof Settings>;

export const DEFAULT_SETTINGS: Settings = { language: 'en', theme: 'system' };

export const settingsApi = {
  'settings.get': method(NoInput).returns<Settings>(),
  /** Partial update; returns the whole settings after the change. */
  'settings.set': method(Settings.partial().strict()).returns<Settings>(),
};

export const settingsEvents = {
  'settings.changed': event<Settings>(),
};
