import type { Namespaces } from '../../../shared/i18n';
import { loadRules } from '../analyzer/rules';

/**
 * Texts that live in knowledge files (each rule's title, message, why and fix in both languages),
 * as i18next namespaces, so engine messages can point at them by key and be shown in either
 * language: `rules:device.cuda-string.title`.
 */
export function knowledgeNamespaces(): Namespaces {
  const rules: Namespaces[string] = { en: {}, 'zh-CN': {} };
  for (const r of loadRules()) {
    for (const lang of ['en', 'zh-CN'] as const) {
      const [group, name] = r.id.split('.') as [string, string];
      const dict = rules[lang]!;
      const g = (dict[group] ??= {}) as Record<string, unknown>;
      g[name] = {
        title: r.title[lang],
        message: r.message[lang],
        why: r.why[lang],
        ...(r.fix ? { fix: r.fix[lang] } : {}),
      };
    }
  }
  return { rules };
}
