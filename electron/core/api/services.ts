import type { Language } from '../../../shared/api';
import type { ArtifactStore } from '../db/artifacts';
import type { Db } from '../db/open';
import type { EventBus } from '../events';
import type { JobRunner } from '../jobs/runner';
import type { StoreLocation } from '../paths';
import type { SettingsStore } from '../settings/settings-store';
import type { HostKeyPrompts } from '../hosts/host-key-prompts';
import type { HostService } from '../hosts/host-service';
import type { HostRepository } from '../hosts/repository';
import type { LiveSessions } from '../hosts/live-sessions';
import type { SessionRepository } from '../sessions/repository';
import type { CodeReviewStore } from '../code-review/store';
import type { PrintPdf } from '../reports/pdf';
import type { ReviewStore } from '../reports/review-store';
import type { StageServices } from '../stages/define';
import type { Handler } from './registry';
import type { MethodName } from '../../../shared/api';

/** Everything the handlers of every domain may use; built once by createCore. */
export interface Services extends StageServices {
  bus: EventBus;
  jobs: JobRunner;
  settings: SettingsStore;
  location: StoreLocation;
  schemaVersion: number;
  prompts: HostKeyPrompts;
  live: LiveSessions;
  reviews: ReviewStore;
  printPdf: PrintPdf;
  db: Db;
  artifacts: ArtifactStore;
  hosts: HostService;
  hostRepo: HostRepository;
  sessions: SessionRepository;
  code: CodeReviewStore;
  language: () => Language;
}

/** The handlers of one domain: exactly the methods named in `K`. */
export type DomainHandlers<K extends MethodName> = { [M in K]: Handler<M> };

/** The methods whose names start with one of the prefixes (`hosts.`, `inventory.`…). */
export type MethodsOf<P extends string> = Extract<MethodName, `${P}.${string}`>;
