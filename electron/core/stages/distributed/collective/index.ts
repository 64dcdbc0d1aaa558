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

export interface CollectiveOptions {
  deadlineMs: number;
  signal: AbortSignal;
  sizesBytes?: number[];
  masterPort?: number;
  launcher?: 'auto' | 'torchrun' | 'srun' | 'msrun' | 'mpirun';
  progress?(fraction: number, msg: Msg): void;
}

export interface CollectiveResult {
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

/** Placeholder until the real launcher lands: says so, runs nothing. */
export function runCollective(
  hosts: CollectiveHost[],
  opts: CollectiveOptions,
): Promise<CollectiveResult> {
  void opts;
  return Promise.resolve({
    launcher: 'none',
    backend: hosts.some((h) => h.hasNpu) ? 'hccl' : 'gloo',
    worldSize: 0,
    ok: false,
    bandwidth: [],
    error: { key: 'stage-distributed:collective.notBuilt' },
    logs: [],
    notes: [],
  });
}
