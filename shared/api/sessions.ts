import { z } from 'zod';
import { method } from './define';
import { HostName } from './hosts';
import type { IsoTime } from './common';
import type { JobStarted } from './jobs';
import type { CheckStatus, StageRunRecord } from './stages';
import { TorchNpuVersion } from './ops';

const ProjectName = z
  .string()
  .min(1)
  .max(80)
  .regex(/^[^\s/\\][^/\\]*$/, 'a name without slashes');

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
  host: string;
  a: CheckStatus | null;
  b: CheckStatus | null;
  change: 'improved' | 'regressed' | 'same' | 'new' | 'gone';
}

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
  /** Runs one stage on one host as a job; the session is created when not given. */
  'stages.run': method(
    z
      .object({
        host: HostName,
        stage: z.enum(['env', 'ops']),
        sessionId: SessionId.optional(),
        project: ProjectName.optional(),
        /** Rerun only these checks (the probe still runs once). */
        checks: z.array(z.string().min(1).max(80)).max(50).optional(),
        password: z.string().max(1024).optional(),
        /** ops stage: `FILE:FUNCTION` on the host; FUNCTION() returns (model, batches). */
        entry: z
          .string()
          .max(4096)
          .regex(/^[^\0\n]+:[A-Za-z_][A-Za-z0-9_]*$/, 'FILE:FUNCTION')
          .optional(),
        /** ops stage: trace a whole script run instead of an entry function. */
        script: z
          .string()
          .max(4096)
          .regex(/^[^\0\n]+$/)
          .optional(),
        backward: z.boolean().optional(),
        /** ops stage: classify for this torch_npu instead of the host's. */
        torchNpu: TorchNpuVersion.optional(),
      })
      .strict(),
  ).returns<JobStarted & { sessionId: number; stageRunId: number }>(),
  /** A failure accepted on purpose: the stage can pass with it, and the report says who and why. */
  'checks.waive': method(
    z
      .object({
        sessionId: SessionId,
        checkId: z.string().min(1).max(80),
        host: HostName,
        reason: z.string().trim().min(3).max(2000),
        by: z.string().trim().min(1).max(120),
      })
      .strict(),
  ).returns<{ ok: true }>(),
  'checks.unwaive': method(
    z.object({ sessionId: SessionId, checkId: z.string().min(1).max(80), host: HostName }).strict(),
  ).returns<{ ok: true }>(),
  'sessions.compare': method(z.object({ a: SessionId, b: SessionId }).strict()).returns<
    CompareRow[]
  >(),
};
