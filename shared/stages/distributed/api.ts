import * as z from 'zod';
import { method } from '../../api/define';
import type { Msg } from '../../api/text';

/** One NPU as `hccn_tool -i N …` describes it; null: the getter printed nothing we could read. */
export interface DeviceFacts {
  /** The id given to `hccn_tool -i` (npu-smi's NPU / logical id). */
  id: number;
  link: 'UP' | 'DOWN' | null;
  /** `-ip -g`; null when the output was empty (unconfigured) or unreadable (see problems). */
  ip: { address: string; netmask: string } | null;
  netHealth: string | null;
  netdetect: string | null;
  tls: { enabled: boolean; preconfigured: boolean | null; alarmDays: number | null } | null;
  /** `-optical -g`: readings outside the printed thresholds (Tx/Rx power, Vcc, temperature). */
  optical: { present: string | null; outOfRange: string[] } | null;
  lldp: { port: string | null; system: string | null } | null;
  /** `-stat -g` error counters that are not zero. */
  statErrors: Record<string, number> | null;
  /** What could not be read, per getter (unknown output, `hccn_tool is busy`, not supported). */
  problems: { getter: string; message: Msg }[];
}

/** A NIC of the host: the one HCCL_SOCKET_IFNAME / HCCL_IF_IP select must exist and be up. */
export interface HostNic {
  name: string;
  up: boolean;
  addresses: string[];
}

/** Everything one host's probe told about its part of the fleet. */
export interface HostDistFacts {
  host: string;
  /** false: the host did not answer (timeout, refused, auth): `error` says why. */
  reachable: boolean;
  error: Msg | null;
  chip: string | null;
  npuCount: number;
  cann: string | null;
  driver: string | null;
  firmware: string | null;
  /** The address other hosts reach it on (HCCL_IF_IP, else the host's end of our SSH session, …: reach-address.ts). */
  address: string | null;
  hccnTool: string | null;
  devices: DeviceFacts[];
  /** HCCL_* and related variables as a non-interactive job sees them after set_env.sh. */
  env: Record<string, string>;
  /** `ulimit -l` in KiB, or 'unlimited'; null: unreadable. */
  memlock: string | null;
  hccnConf: Record<string, string> | null;
  firewall: {
    tool: 'nft' | 'iptables' | null;
    /** false: rules exist but could not be listed (not root): unknown. */
    readable: boolean;
    /** Rule lines that drop or reject HCCL's ports (bounded). */
    blocking: string[];
  };
  nics: HostNic[];
  /** Lines of the probe itself that went wrong (bounded). */
  warnings: Msg[];
}

/** A rank table entry or problem as checked against the inventories. */
export interface RankTableProblem {
  /** JSON path of the offending value (`server_list[1].device[0].device_ip`), or '' for the file. */
  path: string;
  message: Msg;
}

export interface RankTableReport {
  source: 'given' | 'generated';
  /** The file as given (its path) when one was. */
  file: string | null;
  version: string | null;
  ranks: number;
  problems: RankTableProblem[];
  /** The generated (or given, normalised) document, when it could be built. */
  doc: unknown;
}

/** A value that should be the same on every host and is not. */
export interface Disagreement {
  /** `tls`, `cann`, `driver`, `firmware`, or an environment variable's name. */
  item: string;
  values: { host: string; value: string | null }[];
}

export interface CollectiveSummary {
  launcher: string;
  backend: 'hccl' | 'gloo';
  worldSize: number;
  ok: boolean;
  busBandwidthGBs?: number;
  bandwidth: { bytes: number; us: number; algBandwidthGBs: number; busBandwidthGBs: number }[];
  error?: Msg;
  cause?: { id: string; message: Msg; fix: Msg };
  logs: { host: string; rank?: number; file: string; text: string }[];
  notes: Msg[];
}

/** The NPU-to-NPU ping pairs chosen (all pairs up to a size, then a ring plus samples). */
export interface PingPlan {
  rule: 'all-pairs' | 'ring-sampled';
  pairs: number;
  devices: number;
}

/** One NPU-to-NPU ping of the plan: loss in percent, or why it could not be read. */
export interface PingResult {
  from: { host: string; device: number };
  to: { host: string; device: number; address: string };
  lossPct: number | null;
  problem: Msg | null;
}

/** What a distributed run stored beside its checks. */
export interface DistributedResult {
  hosts: HostDistFacts[];
  disagreements: Disagreement[];
  rankTable: RankTableReport;
  pingPlan: PingPlan;
  pings: PingResult[];
  collective: CollectiveSummary | null;
}

const RunId = z.number().int().positive();

export const distributedApi = {
  /** The stored facts, disagreements, rank table and collective of a distributed run. */
  'distributed.get': method(z.object({ stageRunId: RunId }).strict()).returns<DistributedResult>(),
};
