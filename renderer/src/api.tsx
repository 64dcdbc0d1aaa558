import {
  createContext,
  useContext,
  useEffect,
  useLayoutEffect,
  useRef,
  type ReactNode,
} from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { EventName, EventPayload, Input, MethodName, Output } from '../../shared/api';
import type { AppTransport } from './transport';

const TransportContext = createContext<AppTransport | null>(null);

export function TransportProvider(props: { transport: AppTransport; children: ReactNode }) {
  return (
    <TransportContext.Provider value={props.transport}>{props.children}</TransportContext.Provider>
  );
}

export function useTransport(): AppTransport {
  const t = useContext(TransportContext);
  if (!t) throw new Error('useTransport outside TransportProvider');
  return t;
}

/** A query over one contract method; the key is the method and its input. */
export function useCall<K extends MethodName>(
  method: K,
  input: Input<K>,
  options: { enabled?: boolean } = {},
) {
  const transport = useTransport();
  return useQuery({
    queryKey: [method, input],
    queryFn: () => transport.call(method, input),
    enabled: options.enabled ?? true,
  });
}

/** A mutation over one contract method; `invalidates` lists the methods whose queries refresh. */
export function useAction<K extends MethodName>(method: K, invalidates: MethodName[] = []) {
  const transport = useTransport();
  const client = useQueryClient();
  return useMutation<Output<K>, Error, Input<K>>({
    mutationFn: (input) => transport.call(method, input),
    onSuccess: () => {
      for (const m of invalidates) void client.invalidateQueries({ queryKey: [m] });
    },
  });
}

/**
 * Listens to an engine event while the component is mounted. It subscribes once (again only if
 * the transport or the event changes), and calls the handler of the latest render: an inline
 * arrow function does not resubscribe on every render, and cannot see stale state.
 */
export function useEvent<E extends EventName>(
  event: E,
  handler: (payload: EventPayload<E>) => void,
): void {
  const transport = useTransport();
  const latest = useRef(handler);
  useLayoutEffect(() => {
    latest.current = handler;
  });
  useEffect(() => transport.on(event, (payload) => latest.current(payload)), [transport, event]);
}
