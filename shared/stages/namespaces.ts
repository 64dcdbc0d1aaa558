import type { Namespaces } from '../i18n';
import type { StageMessages } from './define';
import { en as codeEn } from './code/messages/en';
import { zhCN as codeZhCN } from './code/messages/zh-CN';
import { en as distributedEn } from './distributed/messages/en';
import { zhCN as distributedZhCN } from './distributed/messages/zh-CN';
import { en as envEn } from './env/messages/en';
import { zhCN as envZhCN } from './env/messages/zh-CN';
import { en as opsEn } from './ops/messages/en';
import { zhCN as opsZhCN } from './ops/messages/zh-CN';
import { en as precisionEn } from './precision/messages/en';
import { zhCN as precisionZhCN } from './precision/messages/zh-CN';
import { en as profilingEn } from './profiling/messages/en';
import { zhCN as profilingZhCN } from './profiling/messages/zh-CN';

/**
 * Every stage's messages by stage id, apart from the stages themselves (./index.ts): the
 * engine's translator, which every CLI command builds, needs the texts, and importing the
 * stages builds every stage's input, report and API schemas (7% of an empty `amw scan`'s
 * instructions). The same dictionaries as each stage's `messages`: a test holds the two lists
 * to each other, so a stage is one line here too.
 */
export const STAGE_MESSAGES: Record<string, StageMessages> = {
  env: { en: envEn, 'zh-CN': envZhCN },
  code: { en: codeEn, 'zh-CN': codeZhCN },
  ops: { en: opsEn, 'zh-CN': opsZhCN },
  precision: { en: precisionEn, 'zh-CN': precisionZhCN },
  distributed: { en: distributedEn, 'zh-CN': distributedZhCN },
  profiling: { en: profilingEn, 'zh-CN': profilingZhCN },
};

/** The i18next namespace of a stage's messages. */
export const stageNs = (id: string): string => `stage-${id}`;

/** Every stage's messages as i18next namespaces (`stage-env`, …). */
export const STAGE_NAMESPACES: Namespaces = Object.fromEntries(
  Object.entries(STAGE_MESSAGES).map(([id, messages]) => [stageNs(id), messages]),
);
