import i18next from 'i18next';
import { hostWord } from '../../shared/api/review-targets';
import type { JobMessage } from '../../shared/api';

/**
 * The one way the UI writes dates and numbers: in the chosen UI language, never the browser's
 * locale (a session header and the timeline once disagreed), and one date style everywhere.
 */
const DATE_TIME: Intl.DateTimeFormatOptions = { dateStyle: 'medium', timeStyle: 'short' };

const dateFormats = new Map<string, Intl.DateTimeFormat>();
const numberFormats = new Map<string, Intl.NumberFormat>();

/** A time stamp (ISO text, epoch ms or a Date) as the language writes it; unreadable input as is. */
export function formatDateTime(value: string | number | Date, lang: string): string {
  const date = value instanceof Date ? value : new Date(value);
  // Intl throws on an invalid date: show what was stored rather than fail the whole view
  if (Number.isNaN(date.getTime())) return String(value);
  let f = dateFormats.get(lang);
  if (!f) dateFormats.set(lang, (f = new Intl.DateTimeFormat(lang, DATE_TIME)));
  return f.format(date);
}

/** A number with the language's digit grouping. */
export function formatNumber(n: number, lang: string): string {
  let f = numberFormats.get(lang);
  if (!f) numberFormats.set(lang, (f = new Intl.NumberFormat(lang)));
  return f.format(n);
}

/**
 * In the language the UI shows now. Components that call these also use useTranslation, so a
 * change of language re-renders them with the new formats.
 */
export const uiDateTime = (value: string | number | Date): string =>
  formatDateTime(value, i18next.language || 'en');
export const uiNumber = (n: number): string => formatNumber(n, i18next.language || 'en');

/**
 * A host as the UI names it where runs are listed: a run on this machine is stored as `(local)`
 * (a stage of the engine's own) or under the built-in host `local`; both read as this machine.
 */
export const uiHost = (host: string): string => hostWord((key) => i18next.t(key), host);

/** A job's current step in words, this machine named as such (its host is stored as `local`). */
export const uiJobStep = (message: JobMessage): string => {
  const params: Record<string, unknown> = { ...message.params };
  if (typeof params.host === 'string') params.host = uiHost(params.host);
  return i18next.t(`jobs.step.${message.key}`, params);
};
