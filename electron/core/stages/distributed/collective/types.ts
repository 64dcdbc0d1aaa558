import type { Msg } from '../../../../../shared/api/text';
import type { HostTransport } from '../../../local/local-exec';

/** A host of the collective: how to reach it, the address other ranks use, its NPUs. */
export interface CollectiveHost {
  name: string;
  transport: HostTransport;
  /** IP other ranks reach it on. */
  address: string;
  npuCount: number;
  hasNpu: boolean;
}

export type LauncherName = 'torchrun' | 'srun' | 'msrun' | 'mpirun';

export interface CollectiveOptions {
  /** Everything (detection, launch, logs) ends by then; a hang is killed on every host. */
  deadlineMs: number;
  signal: AbortSignal;
  /** Message sizes of the bandwidth table (default 64 KiB, 1 MiB, 16 MiB). */
  sizesBytes?: number[];
  /** torchrun's c10d rendezvous port on the first host (default 29400), msrun's master port. */
  masterPort?: number;
  launcher?: 'auto' | LauncherName;
  progress?(fraction: number, msg: Msg): void;
}

export interface BandwidthRow {
  bytes: number;
  us: number;
  algBandwidthGBs: number;
  busBandwidthGBs: number;
}

export interface CollectiveLog {
  host: string;
  rank?: number;
  file: string;
  text: string;
}

export interface CollectiveResult {
  launcher: string;
  backend: 'hccl' | 'gloo';
  worldSize: number;
  ok: boolean;
  /** The bus bandwidth at the largest message size. */
  busBandwidthGBs?: number;
  bandwidth: BandwidthRow[];
  error?: Msg;
  cause?: { id: string; message: Msg; fix: Msg };
  logs: CollectiveLog[];
  notes: Msg[];
}
