import i18next from 'i18next';
import { initReactI18next, useTranslation } from 'react-i18next';
import {
  CJK_SPACING,
  I18N_OPTIONS,
  i18nResources,
  loadedDictionary,
  renderText,
  type Namespaces,
} from '../../shared/i18n';
import { STAGE_NAMESPACES } from '../../shared/stages';
import type { Language, Text } from '../../shared/api';

/** Same dictionaries as the CLI (shared/i18n and each stage's); the stored setting decides. */
export function initI18n(language: Language) {
  void i18next
    .use(initReactI18next)
    .use(CJK_SPACING)
    .init({
      ...I18N_OPTIONS,
      ns: ['translation', ...Object.keys(STAGE_NAMESPACES)],
      resources: i18nResources(STAGE_NAMESPACES),
      lng: language,
    });
  document.documentElement.lang = language;
  return i18next;
}

/** Texts that live in the engine's knowledge files (rule texts…), loaded once connected. */
export function addNamespaces(namespaces: Namespaces): void {
  for (const [ns, byLang] of Object.entries(namespaces))
    for (const [lang, dict] of Object.entries(byLang))
      if (dict) i18next.addResourceBundle(lang, ns, loadedDictionary(lang, dict), true, true);
}

export function setLanguage(language: Language): void {
  void i18next.changeLanguage(language);
  document.documentElement.lang = language;
}

/** The language shown, as the engine names it (i18next may hold a language the app lacks). */
export function shownLanguage(i18n: { language: string }): Language {
  return i18n.language === 'zh-CN' ? 'zh-CN' : 'en';
}

/** Engine text (a message with parameters, or both languages) in the language shown now. */
export function useText(): (text: Text | null | undefined) => string {
  const { t, i18n } = useTranslation();
  const lang = shownLanguage(i18n);
  return (text) => renderText(t as (k: string, p?: Record<string, unknown>) => string, lang, text);
}
