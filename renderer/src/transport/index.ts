import type { Bridge, Transport } from '../../../shared/transport';
import { ipcTransport } from './ipc';
import { websocketTransport, type ConnectionState } from './websocket';

declare global {
  interface Window {
    /** Present only inside the Electron window (see electron/preload). */
    amw?: Bridge;
  }
}

export interface AppTransport extends Transport {
  kind: 'ipc' | 'ws';
  onState(listener: (state: ConnectionState) => void): () => void;
}

/** The single place that knows which transport the page runs on. */
export function createTransport(): AppTransport {
  if (window.amw) {
    return { ...ipcTransport(window.amw), kind: 'ipc', onState: () => () => undefined };
  }
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  const ws = websocketTransport(`${scheme}://${location.host}/rpc`);
  return { ...ws, kind: 'ws' };
}

export type { ConnectionState };
