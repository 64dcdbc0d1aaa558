import type { CheckStatus } from '../../../../../shared/api/stages';
import { isMsg, msg, type Msg, type MsgParam } from '../../../../../shared/api/text';
import { stageNs } from '../../../../../shared/stages/define';
import type { Knowledge } from '../../../knowledge/load';
import type { CheckDef } from '../../define';
import type { EnvFacts } from '../facts';

/** An environment check: a pure evaluator over the probe's facts and the knowledge. */
export type EnvCheck = CheckDef<EnvFacts, Knowledge>;
export type Verdict = ReturnType<EnvCheck['evaluate']>;

/** A message of this stage's namespace (shared/stages/env/messages). */
export const m = (key: string, params?: Record<string, MsgParam>): Msg =>
  msg(`${stageNs('env')}:${key}`, params);

export const verdict = (
  status: CheckStatus,
  summary: Msg,
  evidence: unknown,
  remediation: Msg | null = null,
): Verdict => ({ status, summary, evidence, remediation });

/**
 * Parts joined two at a time by `join.<how>`, so each language separates them its own way (en
 * `; `, zh `；`); renderText only knows lists of sentences and of words. One part is itself;
 * callers never pass none.
 */
function joinBy(how: 'clauses' | 'list' | 'lines', parts: MsgParam[]): MsgParam {
  return parts.reduce((a, b) => m(`join.${how}`, { a, b }));
}

/** Clauses of one sentence: `a; b` (zh `a；b`). */
export function clauses(parts: Msg[]): Msg;
export function clauses(parts: MsgParam[]): MsgParam;
export function clauses(parts: MsgParam[]): MsgParam {
  return joinBy('clauses', parts);
}

/** Items of a list: a plain list of words as is, one with messages in it joined pairwise. */
export const list = (items: MsgParam[]): MsgParam =>
  items.some(isMsg) ? joinBy('list', items) : items;

/** One line each. */
export function lines(parts: Msg[]): Msg;
export function lines(parts: MsgParam[]): MsgParam;
export function lines(parts: MsgParam[]): MsgParam {
  return joinBy('lines', parts);
}
