import type { Language } from '../api/common';
import { en, type Messages } from './en';
import { zhCN } from './zh-CN';

export const MESSAGES: Record<Language, Messages> = { en, 'zh-CN': zhCN };
export type { Messages };

/** Picks a language from a locale string such as `zh_CN.UTF-8` or `zh-Hans`; English otherwise. */
export function languageFromLocale(locale: string | undefined | null): Language {
  return locale && /^zh/i.test(locale) ? 'zh-CN' : 'en';
}

/**
 * A small translator for code that does not run i18next (the CLI, the Electron menus). Same keys
 * and {{name}} interpolation as the UI; a missing key falls back to English, then to the key.
 */
export function translator(lang: Language) {
  return (key: string, params: Record<string, unknown> = {}): string => {
    const raw = lookup(MESSAGES[lang], key) ?? lookup(MESSAGES.en, key) ?? key;
    return raw.replace(/\{\{\s*(\w+)\s*\}\}/g, (_, name: string) =>
      params[name] === undefined ? `{{${name}}}` : String(params[name]),
    );
  };
}

function lookup(tree: unknown, key: string): string | undefined {
  let node: unknown = tree;
  for (const part of key.split('.')) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return typeof node === 'string' ? node : undefined;
}

export type Translate = ReturnType<typeof translator>;

/** i18n key for a job kind: dots in the kind would read as nesting, so they become underscores. */
export const jobKindKey = (kind: string): string => `jobs.kind.${kind.replace(/\./g, '_')}`;

/** The message for a wire error in the user's language, with its detail interpolated. */
export function explainError(
  t: Translate,
  error: { code: string; message: string; detail?: unknown },
): string {
  const detail =
    typeof error.detail === 'object' && error.detail !== null
      ? (error.detail as Record<string, unknown>)
      : {};
  const text = t(`errors.${error.code}`, { ...detail, message: error.message });
  return text === `errors.${error.code}` ? error.message : text;
}
