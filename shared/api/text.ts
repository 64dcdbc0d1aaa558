import type { Language } from './common';

/**
 * Engine text: an i18n key and its parameters. It is stored as is and rendered by i18next where it
 * is shown (renderer, CLI, reports), so a result stored once reads in whichever language is chosen.
 * A parameter may itself be a message (a sentence inside a sentence) or a list of them.
 */
export interface Msg {
  key: string;
  params?: Record<string, MsgParam>;
}
export type MsgParam = string | number | boolean | null | Msg | Localized | MsgParam[];

/** Text stored before engine messages were keys: both languages, already filled in. Still read. */
export type Localized = Record<Language, string>;

/** What a stored result may carry: a message (now) or both languages (results stored earlier). */
export type Text = Msg | Localized;

export const msg = (key: string, params?: Record<string, MsgParam>): Msg =>
  params ? { key, params } : { key };

export function isMsg(x: unknown): x is Msg {
  return typeof x === 'object' && x !== null && typeof (x as Msg).key === 'string';
}

/** Text in both languages (knowledge data carries it so): a parameter read in the reader's. */
export function isLocalized(x: unknown): x is Localized {
  return (
    typeof x === 'object' &&
    x !== null &&
    typeof (x as Localized).en === 'string' &&
    typeof (x as Localized)['zh-CN'] === 'string'
  );
}
