import * as z from 'zod';
import { FORMATS } from '../api/validation';
import { HostName } from '../api/hosts';
import type { Language } from '../api/common';
import type { MethodSpec } from '../api/define';

/** Where a stage runs: on one host, on several at once, or on this machine (the code folder). */
export type RunsOn = 'host' | 'hosts' | 'local';

const SessionId = z.number().int().positive();
const ProjectName = z
  .string()
  .min(1)
  .max(80)
  .regex(/^[^\s/\\][^/\\]*$/, FORMATS.formatName);

/** Fields every `stages.run` input has, whatever the stage. */
const COMMON = {
  /** The session to add the run to; a new one (of `project`, if given) when absent. */
  sessionId: SessionId.optional(),
  project: ProjectName.optional(),
  /** Rerun only these checks (the probe still runs once). */
  checks: z.array(z.string().min(1).max(80)).max(50).optional(),
  password: z.string().max(1024).optional(),
};

const HOSTS = z.array(HostName).min(1).max(1024);
type Target<R extends RunsOn> = R extends 'host'
  ? { host: typeof HostName }
  : R extends 'hosts'
    ? { hosts: typeof HOSTS }
    : Record<never, never>;

/** The `stages.run` input of a stage: `stage` is the discriminant, then what the stage needs. */
export function stageInput<Id extends string, R extends RunsOn, S extends z.ZodRawShape>(
  id: Id,
  runsOn: R,
  shape: S,
) {
  const target = (
    runsOn === 'host' ? { host: HostName } : runsOn === 'hosts' ? { hosts: HOSTS } : {}
  ) as Target<R>;
  // a stage's own field of the same name replaces the target's (the distributed stage takes
  // hosts or a tag, so its `hosts` is optional)
  const fields = { stage: z.literal(id), ...COMMON, ...target, ...shape } as unknown as {
    stage: z.ZodLiteral<Id>;
  } & typeof COMMON &
    Omit<Target<R>, keyof S> &
    S;
  return z.object(fields).strict();
}

/** A stage's messages: i18next namespace `stage-<id>`, one dictionary per language. */
export type StageMessages = Record<Language, Record<string, unknown>>;

/** What both sides know of a stage: its id, where it runs, its run input and its texts. */
export interface SharedStage<Id extends string = string, I extends z.ZodType = z.ZodType> {
  id: Id;
  runsOn: RunsOn;
  input: I;
  messages: StageMessages;
  /** The stage's section of a report: the document's key for it and its schema. */
  report?: { key: string; schema: z.ZodType };
  /** Methods of the stage's own (`ops.get`…), composed into the contract. */
  api?: Record<string, MethodSpec>;
  /**
   * Its checks are the kinds of thing it found (the code stage: one per rule that fired), so a
   * check missing from a run of it passed: nothing of that kind was found, not "not run".
   */
  checksAreFindings?: boolean;
}

/** Keeps the literal types of a stage (its id, input and api) for the contract's types. */
export function defineSharedStage<const S extends SharedStage>(s: S): S {
  return s;
}

export { stageNs } from './namespaces';
