import type * as z from 'zod';
import type { EventSpec, MethodSpec } from './define';
import { appApi } from './app';
import { hostsApi, hostsEvents } from './hosts';
import { liveApi, liveEvents } from './live';
import { sessionsApi } from './sessions';
import { SHARED_STAGES } from '../stages';
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
export * from './text';
// the code review's types, which pages outside a session use too
export * from '../stages/code/api';
export * from './reports';
export * from './doctor';
export type { MethodSpec, EventSpec } from './define';

type StageApis = NonNullable<Extract<(typeof SHARED_STAGES)[number], { api: object }>['api']>;
type UnionToIntersection<U> = (U extends unknown ? (x: U) => void : never) extends (
  x: infer I,
) => void
  ? I
  : never;

/**
 * Domains merged into one contract. Two domains defining the same method would silently shadow
 * each other in a spread: this refuses it when the module loads, so every test and build fails.
 */
export function composeDomains<T extends Record<string, unknown>[]>(
  ...domains: T
): UnionToIntersection<T[number]> {
  const out: Record<string, unknown> = {};
  for (const d of domains)
    for (const [k, v] of Object.entries(d)) {
      if (k in out) throw new Error(`API method ${k} is defined by two domains`);
      out[k] = v;
    }
  return out as UnionToIntersection<T[number]>;
}

/** Every method of the engine, by `domain.verb`: the app's domains and each stage's own. */
export const contract = composeDomains(
  appApi,
  settingsApi,
  jobsApi,
  maintenanceApi,
  hostsApi,
  liveApi,
  sessionsApi,
  reportsApi,
  doctorApi,
  ...SHARED_STAGES.map((s): Record<string, unknown> => ('api' in s && s.api ? s.api : {})),
) as typeof appApi &
  typeof settingsApi &
  typeof jobsApi &
  typeof maintenanceApi &
  typeof hostsApi &
  typeof liveApi &
  typeof sessionsApi &
  typeof reportsApi &
  typeof doctorApi &
  UnionToIntersection<StageApis>;

/** Every event the engine pushes. */
export const events = composeDomains(settingsEvents, jobsEvents, hostsEvents, liveEvents);

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
