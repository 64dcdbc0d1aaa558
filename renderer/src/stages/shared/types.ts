import type { ComponentType } from 'react';
import type { AppInfo, MethodName, SessionRecord, StageRunRecord } from '../../../../shared/api';
import type { StageId } from '../../../../shared/stages';

/** A stage as `app.info` reports it: built or not, where it runs, its name when not built. */
export type StageInfo = AppInfo['stages'][number];

/** What the session view hands every stage's view. */
export interface StageViewProps {
  session: SessionRecord;
  stage: StageInfo;
  /** This stage's runs in the session: one per host (or one for a local stage), reruns merged. */
  runs: StageRunRecord[];
  /** The hosts it runs on: the session's, or, when it has none, those its runs were on. */
  hosts: string[];
}

/**
 * A stage's UI module (`renderer/src/stages/<id>/index.ts`) exports these: its id, its view and
 * the queries a finished run of it makes stale beyond every stage's (see jobs/invalidation.ts).
 */
export interface StageUi {
  id: StageId;
  View: ComponentType<StageViewProps>;
  invalidates?: readonly MethodName[];
  /** It has work that needs no host (an import of a folder here): shown under the add-host notice. */
  opensWithoutHosts?: boolean;
}
