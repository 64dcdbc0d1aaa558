import type { Input, MethodName, Output } from '../../../shared/api';
import { fromWireError } from '../../../shared/errors';
import { dispatch, type CallContext, type Handlers } from './registry';

/**
 * The engine's dispatch without its store: the same contract validation as createCore, over the
 * handlers given — methods that read nothing saved (a one-shot `amw scan` opens, migrates and
 * locks no SQLite file, and loads none of the SSH and stage code). Any other method is an
 * UNKNOWN_METHOD here.
 */
export function createLocalCore<M extends MethodName>(handlers: Pick<Handlers, M>) {
  return {
    async call<K extends M>(
      method: K,
      input: Input<K>,
      ctx: CallContext = { transport: 'cli' },
    ): Promise<Output<K>> {
      const res = await dispatch(handlers as Partial<Handlers>, method, input, ctx);
      if (!res.ok) throw fromWireError(res.error);
      return res.value as Output<K>;
    },
  };
}
