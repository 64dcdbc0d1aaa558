import { LANGUAGES, type LazyNamespaces, type Namespaces } from '../../../shared/i18n';
import { loadRules } from '../analyzer/rules';
import { distKey, KNOWLEDGE_NS } from './keys';
import { loadKnowledge } from './load';
import { loadDoctorRules } from '../doctor/rules';
import { DOCTOR_RULES_NS } from '../../../shared/api/doctor';

/**
 * Texts that live in knowledge files, as i18next namespaces, so engine messages can point at them
 * by key and be shown in either language: each rule's title, message, why and fix
 * (`rules:device.cuda-string.title`), and the env stage's package notes and import causes
 * (`knowledge:packages.flash-attn.fix`, `knowledge:importCauses.cann-libs`; keys in ./keys.ts).
 */
export function knowledgeNamespaces(): Namespaces {
  return Object.fromEntries(
    Object.entries(knowledgeNamespaceLoaders()).map(([ns, load]) => [ns, load()]),
  );
}

/** Each knowledge namespace by the function that reads and validates its files. */
export function knowledgeNamespaceLoaders(): LazyNamespaces {
  return { rules: rulesNamespace, [KNOWLEDGE_NS]: knowledgeTexts, [DOCTOR_RULES_NS]: doctorTexts };
}

function rulesNamespace(): Namespaces[string] {
  const rules: Namespaces[string] = { en: {}, 'zh-CN': {} };
  for (const r of loadRules()) {
    for (const lang of LANGUAGES) {
      const [group, name] = r.id.split('.') as [string, string];
      const dict = rules[lang]!;
      const g = (dict[group] ??= {}) as Record<string, unknown>;
      g[name] = {
        title: r.title[lang],
        message: r.message[lang],
        why: r.why[lang],
        ...(r.fix ? { fix: r.fix[lang] } : {}),
        ...(r.hints?.length
          ? {
              hints: Object.fromEntries(
                r.hints.map((h, i) => [
                  i,
                  {
                    ...(h.message ? { message: h.message[lang] } : {}),
                    ...(h.fix ? { fix: h.fix[lang] } : {}),
                  },
                ]),
              ),
            }
          : {}),
      };
    }
  }
  return rules;
}

function knowledgeTexts(): Namespaces[string] {
  const k = loadKnowledge();
  const knowledge: Namespaces[string] = {};
  for (const lang of LANGUAGES) {
    knowledge[lang] = {
      packages: Object.fromEntries(
        k.packages.packages.map((p) => [
          distKey(p.dist),
          { message: p.message[lang], fix: p.fix[lang] },
        ]),
      ),
      numpy: { message: k.packages.numpy.message[lang], fix: k.packages.numpy.fix[lang] },
      // the meaning under the id itself, as stored check results name it
      importCauses: Object.fromEntries(k.importCauses.map((c) => [c.id, c.message[lang]])),
      importFixes: Object.fromEntries(k.importCauses.map((c) => [c.id, c.fix[lang]])),
    };
  }
  return knowledge;
}

/** The error doctor's rules: what a failed check's diagnosis names (`doctor-rules:<id>.cause`). */
function doctorTexts(): Namespaces[string] {
  const doctor: Namespaces[string] = {};
  for (const lang of LANGUAGES)
    doctor[lang] = Object.fromEntries(
      loadDoctorRules().map((r) => [
        r.id,
        { title: r.title[lang], cause: r.cause[lang], fix: r.fix[lang] },
      ]),
    );
  return doctor;
}
