import i18next from 'i18next';
import { initReactI18next } from 'react-i18next';
import { MESSAGES } from '../../shared/i18n';
import type { Language } from '../../shared/api';

/** Same dictionaries as the CLI (shared/i18n); the stored setting decides the language. */
export function initI18n(language: Language) {
  void i18next.use(initReactI18next).init({
    resources: {
      en: { translation: MESSAGES.en },
      'zh-CN': { translation: MESSAGES['zh-CN'] },
    },
    lng: language,
    fallbackLng: 'en',
    interpolation: { escapeValue: false },
    returnNull: false,
  });
  document.documentElement.lang = language;
  return i18next;
}

export function setLanguage(language: Language): void {
  void i18next.changeLanguage(language);
  document.documentElement.lang = language;
}
