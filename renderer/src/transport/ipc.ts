import { fromWireError } from '../../../shared/errors';
import type { Bridge, Transport } from '../../../shared/transport';
import type { EventName, EventPayload, Input, MethodName, Output } from '../../../shared/api';

/** Electron: the preload's `window.amw` bridge. */
export function ipcTransport(bridge: Bridge): Transport {
  return {
    async call<K extends MethodName>(method: K, input: Input<K>): Promise<Output<K>> {
      const res = await bridge.call(method, input);
      if (!res.ok) throw fromWireError(res.error);
      return res.value as Output<K>;
    },
    on<E extends EventName>(event: E, listener: (payload: EventPayload<E>) => void) {
      return bridge.on(event, (payload) => listener(payload as EventPayload<E>));
    },
  };
}
