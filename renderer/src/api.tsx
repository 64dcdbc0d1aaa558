import { createContext, useContext, useEffect, type ReactNode } from 'react';
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

export function useEvent<E extends EventName>(
  event: E,
  listener: (payload: EventPayload<E>) => void,
) {
  const transport = useTransport();
  useEffect(() => transport.on(event, listener), [transport, event, listener]);
}
