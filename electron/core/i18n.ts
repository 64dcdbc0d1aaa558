import type { Language, Text } from '../../shared/api';
import { renderText, translator, type Translate } from '../../shared/i18n';
import { STAGE_NAMESPACES } from '../../shared/stages/namespaces';
import { knowledgeNamespaceLoaders } from './knowledge/messages';

const cache = new Map<Language, Translate>();

/**
 * i18next for the CLI and reports: the app's strings plus every engine namespace, the knowledge
 * files' read when a key of theirs is first shown (reading and validating them all was a tenth
 * of a one-shot `amw scan`'s start-up, which shows none).
 */
export function engineTranslator(lang: Language): Translate {
  let t = cache.get(lang);
  if (!t) {
    t = translator(lang, STAGE_NAMESPACES, knowledgeNamespaceLoaders());
    cache.set(lang, t);
  }
  return t;
}

/** Renders stored engine text (a message, or both languages from older results) in `lang`. */
export function textIn(lang: Language): (text: Text | null | undefined) => string {
  const t = engineTranslator(lang);
  return (text) => renderText(t, lang, text);
}
