import type { IsoTime, Language } from './common';

export const STAGES = ['env', 'code', 'ops', 'precision', 'distributed', 'profiling'] as const;
export type StageId = (typeof STAGES)[number];

export type CheckStatus = 'pass' | 'warn' | 'fail' | 'skip' | 'error';

/** Text in both languages; the caller shows the one the user reads. */
export type Localized = Record<Language, string>;

/** One check's outcome on one host, as stored and as printed by `amw run --json`. */
export interface CheckOutcome {
  id: string;
  title: Localized;
  status: CheckStatus;
  summary: Localized;
  evidence: unknown;
  remediation: Localized | null;
  /** Present when a failure is waived: who, why, when. */
  waiver?: { reason: string; by: string; at: IsoTime } | null;
}

export type StageStatus =
  'running' | 'pass' | 'warn' | 'fail' | 'error' | 'cancelled' | 'interrupted';

export interface StageRunRecord {
  id: number;
  sessionId: number;
  stage: StageId;
  host: string;
  status: StageStatus;
  startedAt: IsoTime;
  finishedAt: IsoTime | null;
  checks: CheckOutcome[];
}
