import type { IsoTime } from './common';
import type { Text } from './text';

export type CheckStatus = 'pass' | 'warn' | 'fail' | 'skip' | 'error';
/** What a waiver can stand for: a check that failed, warned or errored (engine and UI alike). */
export const WAIVABLE_STATUSES: readonly CheckStatus[] = ['fail', 'warn', 'error'];
export const isWaivable = (s: CheckStatus): boolean => WAIVABLE_STATUSES.includes(s);

/**
 * A waiver that stands: on a check that still fails, warns or errors. One kept on a check that
 * passes on a rerun is history, not a state to show (the check is a pass).
 */
export const isWaived = (c: { status: CheckStatus; waiver?: unknown }): boolean =>
  !!c.waiver && isWaivable(c.status);

/** One check's outcome on one host, as stored and as printed by `amw run --json`. */
export interface CheckOutcome {
  id: string;
  title: Text;
  status: CheckStatus;
  summary: Text;
  evidence: unknown;
  remediation: Text | null;
  /**
   * What the error doctor recognised in a failed check's evidence (rule ids; the rule's title,
   * cause and fix are knowledge texts, namespace `doctor`).
   */
  diagnosis?: { rule: string; line: number; text: string }[];
  /**
   * What the outcome is about when one run checks several hosts or devices (a fleet stage): the
   * host's name and the device's index. `id` stays unique within the run (`check@host#device`).
   */
  host?: string;
  device?: number;
  /** Present when a failure is waived: who, why, when. */
  waiver?: { reason: string; by: string; at: IsoTime } | null;
}

export type StageStatus =
  'running' | 'pass' | 'warn' | 'fail' | 'error' | 'cancelled' | 'interrupted';

export interface StageRunRecord {
  id: number;
  sessionId: number;
  /** A stage id of this build's registry (shared/stages), or of an older build's. */
  stage: string;
  host: string;
  status: StageStatus;
  startedAt: IsoTime;
  finishedAt: IsoTime | null;
  checks: CheckOutcome[];
}
