import * as z from 'zod';
import { FORMATS } from './validation';
import { method } from './define';
import { HostName, RunTarget } from './hosts';
import type { IsoTime } from './common';
import type { JobStarted } from './jobs';
import type { CheckStatus, StageRunRecord } from './stages';
import type { Text } from './text';
import { StageRunInput } from '../stages';

const ProjectName = z
  .string()
  .min(1)
  .max(80)
  .regex(/^[^\s/\\][^/\\]*$/, FORMATS.formatName);

export const GpuBaseline = z
  .object({
    gpuModel: z.string().max(80).optional(),
    stepTimeMs: z.number().positive().optional(),
    throughput: z.number().positive().optional(),
    throughputUnit: z.string().max(40).optional(),
    accuracyMetric: z.string().max(80).optional(),
    accuracyValue: z.number().optional(),
  })
  .strict();

export interface ProjectRecord {
  id: number;
  name: string;
  codeLocation: string | null;
  targetHosts: string[];
  baseline: z.infer<typeof GpuBaseline> | null;
  createdAt: IsoTime;
}

export interface SessionRecord {
  id: number;
  project: string | null;
  title: string;
  /** Hosts this session targets. */
  hosts: string[];
  codeCommit: string | null;
  createdAt: IsoTime;
  /** Per stage and host: the newest result of every check (a rerun of one check updates just it). */
  runs: StageRunRecord[];
}

export interface CompareRow {
  checkId: string;
  /** The check's title as the later session ran it (the earlier one's when only it did). */
  title: Text;
  /** The stage that ran it. */
  stage: string;
  host: string;
  a: CheckStatus | null;
  b: CheckStatus | null;
  change: 'improved' | 'regressed' | 'same' | 'new' | 'gone';
}

/** What happened in a session, for its timeline: every run, waiver and review, with its time. */
export type TimelineEvent = { at: IsoTime } & (
  | { kind: 'run'; runId: number; stage: string; host: string; status: StageRunRecord['status'] }
  | { kind: 'waiver'; checkId: string; host: string; by: string; reason: string }
  /** A waiver taken back: who did (empty when not said) and whose it was. */
  | { kind: 'waiver-removed'; checkId: string; host: string; by: string; waivedBy: string }
  | {
      kind: 'code-review';
      scanId: number;
      file: string;
      review: string;
      /** Set when only some of the proposed changes were taken (the tree's `1/3`). */
      partial?: { accepted: number; total: number };
    }
  | { kind: 'comment'; author: string; target: string; text: string }
  | { kind: 'decision'; by: string; decision: 'approve' | 'changes-requested'; note: string }
);

const SessionId = z.number().int().positive();

export const sessionsApi = {
  'projects.create': method(
    z
      .object({
        name: ProjectName,
        codeLocation: z.string().max(4096).nullish(),
        targetHosts: z.array(HostName).default([]),
        baseline: GpuBaseline.nullish(),
      })
      .strict(),
  ).returns<ProjectRecord>(),
  'projects.list': method(z.object({}).strict()).returns<ProjectRecord[]>(),
  /** Changes a project's code location, target hosts or baseline (the fields given). */
  'projects.update': method(
    z
      .object({
        name: ProjectName,
        codeLocation: z.string().max(4096).nullish(),
        targetHosts: z.array(HostName).optional(),
        baseline: GpuBaseline.nullish(),
      })
      .strict(),
  ).returns<ProjectRecord>(),
  'sessions.create': method(
    z
      .object({
        project: ProjectName.optional(),
        title: z.string().max(200).optional(),
        codeCommit: z.string().max(64).optional(),
        hosts: z.array(HostName).optional(),
      })
      .strict(),
  ).returns<SessionRecord>(),
  'sessions.list': method(z.object({ project: ProjectName.optional() }).strict()).returns<
    SessionRecord[]
  >(),
  'sessions.get': method(z.object({ id: SessionId }).strict()).returns<SessionRecord>(),
  /** The hosts a session targets, at any time (runs already made on a removed host stay). */
  'sessions.setHosts': method(
    z.object({ id: SessionId, hosts: z.array(HostName).max(256) }).strict(),
  ).returns<SessionRecord>(),
  /** Runs one stage as a job (on its host, hosts or this machine); a session is made if not given. */
  'stages.run': method(StageRunInput).returns<
    JobStarted & { sessionId: number; stageRunId: number }
  >(),
  /** One stage run as stored: its checks (with waivers) and how it ended. */
  'stages.get': method(
    z.object({ id: z.number().int().positive() }).strict(),
  ).returns<StageRunRecord>(),
  /** A failure accepted on purpose: the stage can pass with it, and the report says who and why. */
  'checks.waive': method(
    z
      .object({
        sessionId: SessionId,
        checkId: z.string().min(1).max(80),
        /** Where the check ran, as its run names it (StageRunRecord.host). */
        host: RunTarget,
        reason: z.string().trim().min(3).max(2000),
        by: z.string().trim().min(1).max(120),
      })
      .strict(),
  ).returns<{ ok: true }>(),
  'checks.unwaive': method(
    z
      .object({
        sessionId: SessionId,
        checkId: z.string().min(1).max(80),
        host: RunTarget,
        /** Who takes it back, for the timeline: named, as a waiver is. */
        by: z.string().trim().min(1).max(120),
      })
      .strict(),
  ).returns<{ ok: true }>(),
  /** Newest first: stage runs (reruns too), waivers, code review decisions, report reviews. */
  'sessions.timeline': method(z.object({ id: SessionId }).strict()).returns<TimelineEvent[]>(),
  'sessions.compare': method(z.object({ a: SessionId, b: SessionId }).strict()).returns<
    CompareRow[]
  >(),
};
