import type { EventName, EventPayload } from '../../shared/api';

type AnyListener = (event: EventName, payload: unknown) => void;

/** Typed fan-out of engine events to every connected client (IPC windows, sockets, the CLI). */
export class EventBus {
  private readonly listeners = new Set<AnyListener>();

  emit<E extends EventName>(event: E, payload: EventPayload<E>): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(event, payload);
      } catch {
        // One broken subscriber (a closed socket) must not stop the others.
      }
    }
  }

  /** Receives every event; returns the unsubscribe function. */
  subscribe(listener: AnyListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  on<E extends EventName>(event: E, listener: (payload: EventPayload<E>) => void): () => void {
    return this.subscribe((name, payload) => {
      if (name === event) listener(payload as EventPayload<E>);
    });
  }
}
