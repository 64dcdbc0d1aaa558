import * as z from 'zod';
import type { WireError } from '../errors';

/** Messages on the serve-mode WebSocket (`/rpc`). One JSON object per frame. */
export const RpcRequest = z
  .object({
    id: z.union([z.string().min(1).max(64), z.number().int()]),
    method: z.string().min(1).max(100),
    input: z.unknown().optional(),
  })
  .strict();
export type RpcRequest = z.infer<typeof RpcRequest>;

export type RpcResponse =
  | { id: string | number | null; ok: true; value: unknown }
  | { id: string | number | null; ok: false; error: WireError };

export interface RpcEventFrame {
  event: string;
  payload: unknown;
}

/** Largest request the server reads; bigger frames get PAYLOAD_TOO_LARGE, the socket stays open. */
export const MAX_REQUEST_BYTES = 1024 * 1024;
