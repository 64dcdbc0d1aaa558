import type { z } from 'zod';
import type { EventSpec, MethodSpec } from './define';
import { appApi } from './app';
import { hostsApi, hostsEvents } from './hosts';
import { liveApi, liveEvents } from './live';
import { sessionsApi } from './sessions';
import { codeApi } from './code';
import { opsApi } from './ops';
import { reportsApi } from './reports';
import { jobsApi, jobsEvents } from './jobs';
import { maintenanceApi } from './maintenance';
import { settingsApi, settingsEvents } from './settings';
import { doctorApi } from './doctor';

export * from './common';
export * from './app';
export * from './jobs';
export * from './maintenance';
export * from './settings';
export * from './hosts';
export * from './live';
export * from './sessions';
export * from './stages';
export * from './code';
export * from './ops';
export * from './reports';
export * from './doctor';
export type { MethodSpec, EventSpec } from './define';

/** Every method of the engine, by `domain.verb`. */
export const contract = {
  ...appApi,
  ...settingsApi,
  ...jobsApi,
  ...maintenanceApi,
  ...hostsApi,
  ...liveApi,
  ...sessionsApi,
  ...codeApi,
  ...opsApi,
  ...reportsApi,
  ...doctorApi,
} satisfies Record<string, MethodSpec>;

/** Every event the engine pushes. */
export const events = {
  ...settingsEvents,
  ...jobsEvents,
  ...hostsEvents,
  ...liveEvents,
} satisfies Record<string, EventSpec>;

export type Contract = typeof contract;
export type MethodName = keyof Contract;
export type Input<K extends MethodName> = z.input<Contract[K]['input']>;
export type ParsedInput<K extends MethodName> = z.output<Contract[K]['input']>;
export type Output<K extends MethodName> =
  Contract[K] extends MethodSpec<z.ZodType, infer O> ? O : never;

export type Events = typeof events;
export type EventName = keyof Events;
export type EventPayload<E extends EventName> = Events[E] extends EventSpec<infer P> ? P : never;

export const METHOD_NAMES = Object.keys(contract) as MethodName[];
export const EVENT_NAMES = Object.keys(events) as EventName[];

export function isMethodName(name: unknown): name is MethodName {
  return typeof name === 'string' && Object.prototype.hasOwnProperty.call(contract, name);
}

export function isEventName(name: unknown): name is EventName {
  return typeof name === 'string' && Object.prototype.hasOwnProperty.call(events, name);
}
