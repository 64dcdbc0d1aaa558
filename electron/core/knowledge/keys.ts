import { msg, type Msg, type MsgParam } from '../../../shared/api/text';

/** The i18next namespace of texts that live in knowledge files (knowledge/messages.ts). */
export const KNOWLEDGE_NS = 'knowledge';

/**
 * A distribution's name as an i18n key segment: PEP 503 normalised (lower case, runs of `-_.`
 * as one `-`), because i18next reads a dot as nesting and pip treats those names as one anyway.
 */
export const distKey = (dist: string): string => dist.toLowerCase().replace(/[-_.]+/g, '-');

/** What a known troublesome package does on an NPU, or its fix (python-packages.json). */
export const packageText = (dist: string, part: 'message' | 'fix'): Msg =>
  msg(`${KNOWLEDGE_NS}:packages.${distKey(dist)}.${part}`);

/** The numpy 2.x note (python-packages.json), `version` being the installed numpy. */
export const numpyText = (part: 'message' | 'fix', params?: Record<string, MsgParam>): Msg =>
  msg(`${KNOWLEDGE_NS}:numpy.${part}`, params);

/** What an import failure means, or what to do about it (import-causes.json). */
export const importCauseText = (id: string, part: 'message' | 'fix' = 'message'): Msg =>
  msg(`${KNOWLEDGE_NS}:${part === 'message' ? 'importCauses' : 'importFixes'}.${id}`);
