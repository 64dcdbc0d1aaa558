import type { Language, Text } from '../../shared/api';
import { renderText, translator, type Namespaces, type Translate } from '../../shared/i18n';
import { STAGE_NAMESPACES } from '../../shared/stages';
import { knowledgeNamespaces } from './knowledge/messages';

const cache = new Map<Language, Translate>();

/** Every namespace the engine's text uses: the stages' and the knowledge files' (rules…). */
export function engineNamespaces(): Namespaces {
  return { ...STAGE_NAMESPACES, ...knowledgeNamespaces() };
}

/** i18next for the CLI and reports: the app's strings plus every engine namespace. */
export function engineTranslator(lang: Language): Translate {
  let t = cache.get(lang);
  if (!t) {
    t = translator(lang, engineNamespaces());
    cache.set(lang, t);
  }
  return t;
}

/** Renders stored engine text (a message, or both languages from older results) in `lang`. */
export function textIn(lang: Language): (text: Text | null | undefined) => string {
  const t = engineTranslator(lang);
  return (text) => renderText(t, lang, text);
}
