import { AmwError, fromWireError } from '../../../shared/errors';
import { msg } from '../../../shared/api/text';
import type { RpcResponse } from '../../../shared/api/wire';
import type { Transport } from '../../../shared/transport';
import type { EventName, EventPayload, Input, MethodName, Output } from '../../../shared/api';

export type ConnectionState = 'connecting' | 'open' | 'closed';

export interface WsTransport extends Transport {
  state(): ConnectionState;
  onState(listener: (state: ConnectionState) => void): () => void;
}

/**
 * Serve mode: JSON-RPC over one WebSocket to /rpc. The auth cookie set by the first page load
 * rides along. On a drop, pending calls fail with DISCONNECTED and the socket reconnects with
 * backoff; listeners stay registered across reconnects.
 */
export function websocketTransport(url: string): WsTransport {
  let ws: WebSocket | undefined;
  let state: ConnectionState = 'connecting';
  let nextId = 1;
  let retry = 0;
  const pending = new Map<
    number,
    { resolve: (v: unknown) => void; reject: (e: unknown) => void }
  >();
  const listeners = new Map<string, Set<(payload: unknown) => void>>();
  const stateListeners = new Set<(s: ConnectionState) => void>();
  let opened: Promise<void>;

  const setState = (s: ConnectionState) => {
    state = s;
    for (const l of stateListeners) l(s);
  };

  function connect(): void {
    setState('connecting');
    opened = new Promise<void>((resolve) => {
      const socket = new WebSocket(url);
      ws = socket;
      socket.onopen = () => {
        retry = 0;
        setState('open');
        resolve();
      };
      socket.onmessage = (ev: MessageEvent<string>) => {
        const msg = JSON.parse(ev.data) as RpcResponse | { event: string; payload: unknown };
        if ('event' in msg) {
          for (const l of listeners.get(msg.event) ?? []) l(msg.payload);
          return;
        }
        const p = typeof msg.id === 'number' ? pending.get(msg.id) : undefined;
        if (!p) return;
        pending.delete(msg.id as number);
        if (msg.ok) p.resolve(msg.value);
        else p.reject(fromWireError(msg.error));
      };
      socket.onclose = () => {
        for (const p of pending.values()) {
          p.reject(new AmwError('DISCONNECTED', msg('errors.text.engineClosed')));
        }
        pending.clear();
        setState('closed');
        const delay = Math.min(5000, 250 * 2 ** retry++);
        setTimeout(connect, delay);
      };
    });
  }
  connect();

  return {
    async call<K extends MethodName>(method: K, input: Input<K>): Promise<Output<K>> {
      await opened;
      const id = nextId++;
      return new Promise<Output<K>>((resolve, reject) => {
        pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
        ws!.send(JSON.stringify({ id, method, input }));
      });
    },
    on<E extends EventName>(event: E, listener: (payload: EventPayload<E>) => void) {
      const set = listeners.get(event) ?? new Set();
      listeners.set(event, set);
      const l = listener as (p: unknown) => void;
      set.add(l);
      return () => set.delete(l);
    },
    state: () => state,
    onState(listener) {
      stateListeners.add(listener);
      return () => stateListeners.delete(listener);
    },
  };
}
