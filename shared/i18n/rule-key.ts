/**
 * The i18n key of a code rule's text (namespace `rules`, built from the knowledge files). Its own
 * module: the scanner uses it and must not load i18next to do so.
 */
export function ruleKey(
  id: string,
  field: 'title' | 'message' | 'why' | 'fix',
  hint?: number,
): string {
  return `rules:${id}.${hint === undefined ? '' : `hints.${hint}.`}${field}`;
}
