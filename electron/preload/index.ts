// The renderer's only door to the engine: two functions, allow-listed to the contract's names.
// No ipcRenderer, no shell, no Node — the window is sandboxed and context-isolated.
import { contextBridge, ipcRenderer, type IpcRendererEvent } from 'electron';
import { EVENT_NAMES, METHOD_NAMES } from '../../shared/api';
import type { Bridge, RpcResult } from '../../shared/transport';

const methods = new Set<string>(METHOD_NAMES);
const events = new Set<string>(EVENT_NAMES);

const bridge = {
  call(method: string, input: unknown): Promise<RpcResult> {
    if (!methods.has(method)) {
      return Promise.resolve({
        ok: false,
        error: { code: 'UNKNOWN_METHOD', message: `Unknown method: ${String(method)}` },
      });
    }
    return ipcRenderer.invoke('amw:call', method, input) as Promise<RpcResult>;
  },
  on(event: string, listener: (payload: unknown) => void): () => void {
    if (!events.has(event)) throw new Error(`Unknown event: ${String(event)}`);
    const wrapped = (_e: IpcRendererEvent, name: string, payload: unknown) => {
      if (name === event) listener(payload);
    };
    ipcRenderer.on('amw:event', wrapped);
    return () => ipcRenderer.off('amw:event', wrapped);
  },
} satisfies Bridge;

contextBridge.exposeInMainWorld('amw', bridge);
