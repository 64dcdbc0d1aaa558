import type { Text } from './text';
import * as z from 'zod';
import { FORMATS } from './validation';
import { event, method } from './define';
import type { IsoTime } from './common';
import type { JobStarted } from './jobs';
import type { WireError } from '../errors';

/** A host name in the workbench: what users type after `amw inventory`. */
/** The built-in host that is this machine: no SSH, no key, no password. */
export const LOCAL_HOST_NAME = 'local';
/**
 * The inventory's fields a fleet is compared on, in the order tables show them (the hosts page's
 * fleet table, a report's hosts table).
 */
export const INVENTORY_COLUMNS = [
  'chip',
  'chipCount',
  'health',
  'cann',
  'driver',
  'firmware',
  'python',
  'torch',
  'torchNpu',
] as const;
/** What a stage run or a check done on this machine is stored against (no host of that name). */
export const LOCAL_TARGET = '(local)';

export const HostName = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, FORMATS.formatHostName);

/**
 * What a run names as its target, and a waiver with it: a host, several joined by commas (the
 * distributed and profiling stages) or this machine.
 */
export const RunTarget = z.union([
  z.literal(LOCAL_TARGET),
  z
    .string()
    .max(2000)
    .refine(
      (s) => s.split(',').every((h) => HostName.safeParse(h).success),
      'a host name, several joined by commas, or (local)',
    ),
]);

const Address = z
  .string()
  .min(1)
  .max(253)
  .regex(/^[A-Za-z0-9._:%-]+$/, FORMATS.formatAddress);

const UserName = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9._][A-Za-z0-9._-]*\$?$/, FORMATS.formatLogin);

const HostFields = {
  name: HostName,
  hostname: Address,
  port: z.number().int().min(1).max(65535),
  username: UserName.nullish(),
  identityFile: z.string().min(1).max(4096).nullish(),
  /** Name of another host to jump through (ProxyJump). */
  jump: HostName.nullish(),
  group: z.string().min(1).max(64).nullish(),
  tags: z.array(z.string().min(1).max(32)).max(20),
};
export const HostInput = z
  .object({ ...HostFields, port: HostFields.port.default(22), tags: HostFields.tags.default([]) })
  .strict();
export type HostInput = z.input<typeof HostInput>;
/** Fields to change; one left out keeps its value (no default fills it in: port 22 would). */
export const HostPatch = z.object(HostFields).partial().strict();

export interface HostRecord {
  id: number;
  name: string;
  hostname: string;
  port: number;
  username: string | null;
  identityFile: string | null;
  jump: string | null;
  group: string | null;
  tags: string[];
  source: 'manual' | 'ssh_config';
  createdAt: IsoTime;
  updatedAt: IsoTime;
}

/** A host with the gist of its newest inventory, for lists and the fleet table. */
export interface HostSummary extends HostRecord {
  inventory: InventorySummary | null;
  /** A password is remembered (desktop app only, encrypted by the OS keychain). */
  savedSecret: boolean;
}

export interface InventorySummary {
  id: number;
  takenAt: IsoTime;
  chip: string | null;
  chipCount: number;
  health: 'OK' | 'Warning' | 'Alarm' | 'Critical' | 'UNKNOWN' | 'mixed' | null;
  cann: string | null;
  driver: string | null;
  firmware: string | null;
  torch: string | null;
  torchNpu: string | null;
  python: string | null;
}

export interface NpuDeviceFacts {
  npu: number;
  chip: number;
  name: string | null;
  health: string | null;
  powerW: number | null;
  tempC: number | null;
  aicorePct: number | null;
  hbmUsedMB: number | null;
  hbmTotalMB: number | null;
  memUsedMB: number | null;
  memTotalMB: number | null;
  busId: string | null;
  phyId: number | null;
  logicId: number | null;
}

export interface NpuFacts {
  smiVersion: string | null;
  devices: NpuDeviceFacts[];
  processes: {
    npu: number;
    chip: number | null;
    pid: number;
    name: string;
    memMB: number | null;
  }[];
  error: { message: string; code: number | null; meaning: string | null } | null;
  warnings: string[];
}

/** One inventory snapshot: what `amw inventory NAME --json` prints. Null means absent. */
export interface Inventory {
  host: string;
  takenAt: IsoTime;
  os: string | null;
  kernel: string | null;
  arch: string | null;
  hostname: string | null;
  cpu: { model: string | null; cores: number | null };
  memoryMB: number | null;
  memoryAvailableMB: number | null;
  disks: { mount: string; freeMB: number; totalMB: number }[];
  npu: NpuFacts | null;
  versions: {
    cann: string | null;
    driver: string | null;
    firmware: string | null;
    python: string | null;
    torch: string | null;
    torchNpu: string | null;
  };
  /** ASCEND_* / HCCL_* (and library paths) after sourcing set_env.sh. */
  env: Record<string, string>;
  /** Whether a non-interactive login already has the toolkit environment without sourcing. */
  envSourcedByDefault: boolean;
  setEnvPath: string | null;
  /** /dev/davinci* and friends. */
  devices: string[];
  /** Python import errors, npu-smi failures and anything else worth reading. */
  notes: string[];
  warnings: string[];
}

export interface InventorySnapshot {
  id: number;
  hostName: string;
  takenAt: IsoTime;
  data: Inventory;
}

export interface DiffRow {
  path: string;
  a: unknown;
  b: unknown;
}

export interface HostKeyInfo {
  name: string;
  host: string;
  port: number;
  keyType: string;
  fingerprint: string;
  knownTypes: string[];
}

export interface ConnectionTest {
  ok: boolean;
  host: string;
  latencyMs: number | null;
  /** Remote `uname -srm` when connected. */
  system: string | null;
  error: WireError | null;
}

export interface ImportResult {
  added: string[];
  updated: string[];
  skipped: { name: string; reason: string }[];
  /** What the file asked for and was not done (e.g. `Match exec`, never run), one line each. */
  warnings?: string[];
}

export interface FleetRow {
  host: HostSummary;
  /** Columns where this host differs from the majority of its group. */
  differs: (keyof InventorySummary)[];
}

const NameOnly = z.object({ name: HostName }).strict();
const Password = z.string().max(1024).optional();

export const hostsApi = {
  'hosts.list': method(z.object({ group: z.string().optional() }).strict()).returns<
    HostSummary[]
  >(),
  'hosts.get': method(NameOnly).returns<HostSummary>(),
  /** Saved even when its key file is missing: `warnings` say so (a Test would fail on it). */
  'hosts.add': method(HostInput).returns<HostRecord & { warnings?: Text[] }>(),
  'hosts.update': method(z.object({ name: HostName, patch: HostPatch }).strict()).returns<
    HostRecord & { warnings?: Text[] }
  >(),
  'hosts.remove': method(NameOnly).returns<{ removed: string }>(),
  /** Reads ~/.ssh/config (or `file`) with Include; `names` limits what is imported. */
  /**
   * Reads ~/.ssh/config (or `file`); with no file given and no ~/.ssh/config, `missing` names the
   * path looked for instead of failing.
   */
  'hosts.importSshConfig': method(
    z
      .object({
        file: z.string().max(4096).optional(),
        names: z.array(HostName).optional(),
        dryRun: z.boolean().optional(),
      })
      .strict(),
  ).returns<ImportResult & { candidates: HostInput[]; missing?: string }>(),
  /** Connects and runs `uname`; never throws for a connection problem: the result explains it. */
  'hosts.test': method(
    z.object({ name: HostName, password: Password }).strict(),
  ).returns<ConnectionTest>(),
  /** Desktop app only: remembers the password, encrypted with the OS keychain (safeStorage). */
  'hosts.rememberPassword': method(
    z.object({ name: HostName, password: z.string().min(1).max(1024) }).strict(),
  ).returns<{ ok: true }>(),
  'hosts.forgetPassword': method(NameOnly).returns<{ ok: true }>(),
  /** Answer to a `secret.prompt` event; null declines. */
  'hosts.answerSecret': method(
    z
      .object({ promptId: z.string().min(1).max(64), secret: z.string().max(1024).nullable() })
      .strict(),
  ).returns<{ ok: true }>(),
  /** Answer to a `hostkey.prompt` event. */
  'hosts.answerHostKey': method(
    z.object({ promptId: z.string().min(1).max(64), accept: z.boolean() }).strict(),
  ).returns<{ ok: true }>(),
  'inventory.take': method(
    z.object({ name: HostName, password: Password }).strict(),
  ).returns<JobStarted>(),
  'inventory.list': method(NameOnly).returns<{ id: number; takenAt: IsoTime }[]>(),
  'inventory.get': method(
    z.object({ id: z.number().int().positive() }).strict(),
  ).returns<InventorySnapshot>(),
  'inventory.diff': method(
    z.object({ a: z.number().int().positive(), b: z.number().int().positive() }).strict(),
  ).returns<DiffRow[]>(),
  /** Inventories many hosts at once (bounded concurrency), as one job with per-host progress. */
  'fleet.inventory': method(
    z.object({ names: z.array(HostName).optional(), group: z.string().optional() }).strict(),
  ).returns<JobStarted>(),
  'fleet.table': method(z.object({ group: z.string().optional() }).strict()).returns<FleetRow[]>(),
};

export const hostsEvents = {
  /** A host key is not on record: the UI shows type and fingerprint and answers. */
  'hostkey.prompt': event<{ promptId: string; info: HostKeyInfo }>(),
  /** `renamedFrom`: the host had that name; what named it (sessions, runs, waivers) follows. */
  'hosts.changed': event<{ name: string; renamedFrom?: string }>(),
  /** A private key needs its passphrase (used once, never stored). */
  'secret.prompt': event<{ promptId: string; kind: 'passphrase'; file: string }>(),
};
