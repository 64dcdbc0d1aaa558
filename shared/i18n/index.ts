import i18next, { type i18n, type Resource } from 'i18next';
import type { Language } from '../api/common';
import { isLocalized, isMsg, type MsgParam, type Text } from '../api/text';
import { en, type Messages } from './en';
import { zhCN } from './zh-CN';
import { ruleKey } from './rule-key';

export const LANGUAGES: Language[] = ['en', 'zh-CN'];

/** The app's own strings, namespace `translation` (the default). */
export const MESSAGES: Record<Language, Messages> = { en, 'zh-CN': zhCN };
export type { Messages };

/** More namespaces by language: a stage's messages (`stage-env`), knowledge texts (`rules`). */
export type Namespaces = Record<string, Partial<Record<Language, Record<string, unknown>>>>;

/** Picks a language from a locale string such as `zh_CN.UTF-8` or `zh-Hans`; English otherwise. */
export function languageFromLocale(locale: string | undefined | null): Language {
  return locale && /^zh/i.test(locale) ? 'zh-CN' : 'en';
}

/** i18next resources: the app's strings plus the given namespaces, for every language. */
export function i18nResources(namespaces: Namespaces = {}): Resource {
  const out: Resource = {};
  for (const lang of LANGUAGES) {
    out[lang] = { translation: loadedDictionary(lang, MESSAGES[lang]) };
    for (const [ns, byLang] of Object.entries(namespaces)) {
      const dict = byLang[lang];
      if (dict) out[lang]![ns] = loadedDictionary(lang, dict);
    }
  }
  return out;
}

/**
 * Chinese text has no space between two Chinese characters; the templates keep one beside a
 * placeholder for Latin values ("npu-a 上的"), which a Chinese value ("本机") then fills. Those
 * template spaces are marked when a zh-CN dictionary is loaded and dropped after interpolation
 * where Chinese meets Chinese; a space inside a value (a person's title) is never touched.
 */
const SLOT_SPACE = '\uE000';
/**
 * The placeholders whose values are words (where a run happened, a stage, a person, the tool), not paths
 * or file names: a path ending in a Chinese folder name keeps its space before the next word.
 */
const WORD_SLOTS = '(?:host|hosts|target|where|stage|side|by|check|title|tool)';
/** Chinese characters, CJK punctuation and full-width forms (（）：，): no space beside them. */
const CJK = '[\\u4e00-\\u9fff\\u3000-\\u303f\\uff00-\\uffef]';
const BEFORE_SLOT = new RegExp(`(${CJK}) (?=\\{\\{${WORD_SLOTS}\\}\\})`, 'g');
const AFTER_SLOT = new RegExp(`(\\{\\{${WORD_SLOTS}\\}\\}) (?=${CJK})`, 'g');
const BETWEEN_CJK = new RegExp(`(${CJK})\\uE000(?=${CJK})`, 'g');
const markSpaces = (s: string) =>
  s.replace(BEFORE_SLOT, `$1${SLOT_SPACE}`).replace(AFTER_SLOT, `$1${SLOT_SPACE}`);

/** A dictionary as loaded: zh-CN's template spaces beside placeholders marked (above). */
export function loadedDictionary<T>(lang: string, dict: T): T {
  if (lang !== 'zh-CN') return dict;
  const walk = (v: unknown): unknown =>
    typeof v === 'string'
      ? markSpaces(v)
      : v && typeof v === 'object'
        ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]))
        : v;
  return walk(dict) as T;
}

export const CJK_SPACING = {
  type: 'postProcessor' as const,
  name: 'cjk-spacing',
  process: (value: string) =>
    value.includes(SLOT_SPACE)
      ? value.replace(BETWEEN_CJK, '$1').replaceAll(SLOT_SPACE, ' ')
      : value,
};

/** Options every i18next instance shares (renderer, CLI, menus, reports). */
export const I18N_OPTIONS = {
  postProcess: [CJK_SPACING.name],
  fallbackLng: 'en',
  defaultNS: 'translation',
  nsSeparator: ':',
  keySeparator: '.',
  interpolation: { escapeValue: false },
  returnNull: false,
  // i18next otherwise prints an advert on the console: on the CLI's stdout, it would break --json
  showSupportNotice: false,
} as const;

export type Translate = (key: string, params?: Record<string, unknown>) => string;

/**
 * A translator for code that does not render React (the CLI, the Electron menus, reports): an
 * i18next instance, so plurals (`count`) and namespaces work as in the UI. A missing key falls
 * back to English, then to the key itself.
 */
export function translator(
  lang: Language,
  namespaces: Namespaces = {},
  lazy: LazyNamespaces = {},
): Translate {
  const instance: i18n = i18next.createInstance().use(CJK_SPACING);
  void instance.init({
    ...I18N_OPTIONS,
    lng: lang,
    ns: ['translation', ...Object.keys(namespaces), ...Object.keys(lazy)],
    resources: i18nResources(namespaces),
    initAsync: false,
  });
  const pending = new Map(Object.entries(lazy));
  return (key, params) => {
    const ns = key.slice(0, Math.max(0, key.indexOf(':')));
    const load = pending.get(ns);
    if (load) {
      // a loader that throws (a knowledge file that is not valid) throws at every such key:
      // never a key shown in place of its text without saying why
      const byLang = load();
      for (const [l, dict] of Object.entries(byLang))
        if (dict) instance.addResourceBundle(l, ns, loadedDictionary(l, dict));
      pending.delete(ns);
    }
    return String(instance.t(key, params as never));
  };
}

/**
 * Namespaces built the first time a key of theirs is translated: the knowledge files' texts are
 * read and validated only by a command that shows one (a one-shot `amw scan` shows none).
 */
export type LazyNamespaces = Record<string, () => Namespaces[string]>;

/**
 * Engine text in the reader's language. A message's parameters may be messages themselves (or
 * lists of them: sentences joined the language's way); plain lists are joined as lists.
 * Results stored before messages were keys carry both languages and are read as they are.
 */
export function renderText(t: Translate, lang: Language, text: Text | null | undefined): string {
  if (!text) return '';
  if (!isMsg(text)) return text[lang] ?? text.en ?? '';
  const params: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(text.params ?? {})) params[k] = renderParam(t, lang, v);
  return t(text.key, params);
}

function renderParam(t: Translate, lang: Language, v: MsgParam): unknown {
  if (Array.isArray(v)) {
    if (v.some(isMsg))
      return v.map((x) => renderParam(t, lang, x)).join(t('common.join.sentences'));
    return v.map((x) => renderParam(t, lang, x)).join(t('common.join.list'));
  }
  if (isMsg(v) || isLocalized(v)) return renderText(t, lang, v);
  return v;
}

/** i18n key for a job kind: dots in the kind would read as nesting, so they become underscores. */
export const jobKindKey = (kind: string): string => `jobs.kind.${kind.replace(/\./g, '_')}`;

/** A job's kind in words; a stage run (`stage.<id>`) is named after its stage. */
export function jobTitle(t: Translate, kind: string): string {
  const stage = /^stage\.(.+)$/.exec(kind)?.[1];
  if (stage) {
    const name = t(`stage-${stage}:name`);
    if (name !== 'name' && name !== `stage-${stage}:name`)
      return t('sessions.stageJob', { stage: name });
  }
  return t(jobKindKey(kind));
}

/**
 * A code rule's title in the language shown (`rules:<id>.title`, from the knowledge files); the
 * id itself where this build has no such rule (a scan stored by another version).
 */
export function ruleTitle(t: Translate, id: string): string {
  return t(ruleKey(id, 'title'), { defaultValue: id });
}

/** A check's or rule's title with its id after it, as a dialog or tooltip names it. */
export const titleWithId = (t: Translate, title: string, id: string): string =>
  `${title}${t('common.paren', { text: id })}`;

/** The message for a wire error in the user's language, with its detail interpolated. */
export function explainError(
  t: Translate,
  error: { code: string; message: string; detail?: unknown; text?: unknown },
  lang: Language = 'en',
): string {
  const detail =
    typeof error.detail === 'object' && error.detail !== null
      ? (error.detail as Record<string, unknown>)
      : {};
  const issues = error.code === 'VALIDATION' ? validationIssues(detail.issues) : [];
  // a stage's own refusal names its text as the issue's message (`stage-ops:needsEntry`)
  // (a translator without that namespace answers with the bare key: the English message stands)
  const keyed = (error.code === 'VALIDATION' ? keyedIssues(detail.issues) : [])
    .map((k) => [k, t(k)] as const)
    .filter(([k, said]) => said !== k && said !== k.split(':')[1])
    .map(([, said]) => said);
  // an engine message with a key of its own reads in the language shown: its text, or (a
  // connection failure) a messageKey filled from its detail; the English message is the fallback
  const text = isMsg(error.text) ? error.text : isMsg(detail.text) ? detail.text : null;
  const own = text
    ? renderText(t, lang, text)
    : typeof detail.messageKey === 'string'
      ? t(detail.messageKey, detail)
      : null;
  const ownKey = text ? text.key : detail.messageKey;
  const message = issues.length
    ? issues.map((i) => explainIssue(t, i)).join(t('common.join.sentences'))
    : keyed.length
      ? keyed.join(t('common.join.sentences'))
      : own && own !== ownKey
        ? own
        : error.message;
  const said = t(`errors.${error.code}`, { ...detail, message });
  return said === `errors.${error.code}` ? message : said;
}

/** A refused field as the engine describes it (`validationError` in the core). */
export interface ValidationIssue {
  path: string;
  field: string;
  rule: string;
  params?: Record<string, string | number>;
}

const validationIssues = (v: unknown): ValidationIssue[] =>
  Array.isArray(v)
    ? v.filter(
        (i): i is ValidationIssue =>
          typeof i === 'object' &&
          i !== null &&
          typeof (i as ValidationIssue).rule === 'string' &&
          typeof (i as ValidationIssue).field === 'string',
      )
    : [];

/** Issues that carry an i18n key as their message and no rule (a stage's own check). */
const keyedIssues = (v: unknown): string[] =>
  Array.isArray(v)
    ? v
        .filter(
          (i): i is { message: string } =>
            typeof i === 'object' &&
            i !== null &&
            typeof (i as { rule?: unknown }).rule !== 'string' &&
            typeof (i as { message?: unknown }).message === 'string' &&
            /^[\w-]+:[\w.]+$/.test((i as { message: string }).message),
        )
        .map((i) => i.message)
    : [];

/** A field's name in words, else the field as the contract names it. */
export function fieldName(t: Translate, field: string): string {
  const key = `validation.field.${field}`;
  const name = t(key);
  return name === key ? field : name;
}

/** "Port: must be a number" — one refused field, in the user's language. */
export function explainIssue(t: Translate, issue: ValidationIssue): string {
  const key = `validation.rule.${issue.rule}`;
  const problem = t(key, issue.params ?? {});
  return t('validation.issue', {
    field: fieldName(t, issue.field),
    problem: problem === key ? t('validation.rule.invalid') : problem,
  });
}

/** The issues of a VALIDATION error, by field (a form shows each by its input). */
export function fieldIssues(error: {
  code: string;
  detail?: unknown;
}): Map<string, ValidationIssue> {
  const out = new Map<string, ValidationIssue>();
  if (error.code !== 'VALIDATION' || typeof error.detail !== 'object' || !error.detail) return out;
  for (const i of validationIssues((error.detail as { issues?: unknown }).issues))
    if (!out.has(i.field)) out.set(i.field, i);
  return out;
}
