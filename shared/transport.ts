import type { WireError } from './errors';
import type { EventName, EventPayload, Input, MethodName, Output } from './api';

/**
 * How a client reaches the engine. The renderer talks to one of these and never learns whether it
 * is Electron IPC or a WebSocket to `amw serve`.
 */
export interface Transport {
  call<K extends MethodName>(method: K, input: Input<K>): Promise<Output<K>>;
  /** Subscribes to an event; returns the unsubscribe function. */
  on<E extends EventName>(event: E, listener: (payload: EventPayload<E>) => void): () => void;
}

/** What the Electron preload exposes as `window.amw`; results come back as a tagged union. */
export interface Bridge {
  call(method: string, input: unknown): Promise<RpcResult>;
  on(event: string, listener: (payload: unknown) => void): () => void;
}

export type RpcResult = { ok: true; value: unknown } | { ok: false; error: WireError };
