import * as z from 'zod';
import { event, method } from './define';
import { HostName } from './hosts';
import type { IsoTime } from './common';
import type { WireError } from '../errors';

/** One npu-smi reading of one chip, as the monitor streams it. */
export interface ChipSample {
  npu: number;
  chip: number;
  health: string | null;
  aicorePct: number | null;
  hbmUsedMB: number | null;
  hbmTotalMB: number | null;
  memUsedMB: number | null;
  memTotalMB: number | null;
  tempC: number | null;
  powerW: number | null;
}

export interface MonitorSample {
  monitorId: string;
  host: string;
  at: IsoTime;
  chips: ChipSample[];
  warnings: string[];
}

const Id = z.string().min(1).max(64);
const Password = z.string().max(1024).optional();

export const liveApi = {
  /** Polls `npu-smi info` over one kept-open SSH channel until stopped. */
  'monitor.start': method(
    z
      .object({
        name: HostName,
        intervalSec: z.number().int().min(1).max(60).default(2),
        password: Password,
      })
      .strict(),
  ).returns<{ monitorId: string }>(),
  'monitor.stop': method(z.object({ monitorId: Id }).strict()).returns<{ ok: true }>(),
  /** An interactive shell on the host (xterm in the UI). */
  'terminal.open': method(
    z
      .object({
        name: HostName,
        cols: z.number().int().min(2).max(1000),
        rows: z.number().int().min(2).max(500),
        password: Password,
      })
      .strict(),
  ).returns<{ terminalId: string }>(),
  'terminal.input': method(
    z.object({ terminalId: Id, data: z.string().max(65536) }).strict(),
  ).returns<{ ok: true }>(),
  'terminal.resize': method(
    z
      .object({
        terminalId: Id,
        cols: z.number().int().min(2).max(1000),
        rows: z.number().int().min(2).max(500),
      })
      .strict(),
  ).returns<{ ok: true }>(),
  'terminal.close': method(z.object({ terminalId: Id }).strict()).returns<{ ok: true }>(),
};

export const liveEvents = {
  'monitor.sample': event<MonitorSample>(),
  /** The monitor stopped: asked to, or the connection dropped (error set). */
  'monitor.ended': event<{ monitorId: string; error: WireError | null }>(),
  'terminal.data': event<{ terminalId: string; data: string }>(),
  'terminal.exit': event<{ terminalId: string; code: number | null; error: WireError | null }>(),
};
