import * as z from 'zod';
import { event, method } from './define';
import type { IsoTime } from './common';
import type { WireError } from '../errors';

export const JOB_STATUSES = [
  'queued',
  'running',
  'succeeded',
  'failed',
  'cancelled',
  /** The process ended (app closed, killed) while the job ran; it can be started again. */
  'interrupted',
] as const;
export const JobStatus = z.enum(JOB_STATUSES);
export type JobStatus = z.infer<typeof JobStatus>;

export const FINISHED_JOB_STATUSES: readonly JobStatus[] = [
  'succeeded',
  'failed',
  'cancelled',
  'interrupted',
];

/** A message the UI localises: an i18n key under `jobs.step.` plus its parameters. */
export interface JobMessage {
  key: string;
  params?: Record<string, string | number>;
}

/** A long-running piece of work, as persisted and as pushed in `job.updated`. */
export interface JobRecord {
  id: string;
  /** e.g. `maintenance.backup`; the UI names it through `jobs.kind.<kind>`. */
  kind: string;
  params: Record<string, unknown>;
  status: JobStatus;
  /** 0..1, or null while the amount of work is not known yet. */
  progress: number | null;
  message: JobMessage | null;
  result: unknown;
  error: WireError | null;
  createdAt: IsoTime;
  startedAt: IsoTime | null;
  finishedAt: IsoTime | null;
}

/** What every job-starting method returns at once. */
export interface JobStarted {
  jobId: string;
}

const JobId = z.string().min(1).max(64);

export const jobsApi = {
  'jobs.list': method(
    z
      .object({
        status: JobStatus.optional(),
        limit: z.number().int().min(1).max(500).optional(),
      })
      .strict(),
  ).returns<JobRecord[]>(),
  'jobs.get': method(z.object({ id: JobId }).strict()).returns<JobRecord>(),
  /** Asks a running job to stop; resolves with the job as it is after the request. */
  'jobs.cancel': method(z.object({ id: JobId }).strict()).returns<JobRecord>(),
};

export const jobsEvents = {
  /** Every state change and (throttled, ≤10/s per job) progress step. */
  'job.updated': event<JobRecord>(),
};
