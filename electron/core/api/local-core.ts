import type { Contract, Input, MethodName, Output } from '../../../shared/api';
import { fromWireError } from '../../../shared/errors';
import { dispatchTo, type CallContext } from './dispatch';
import type { Handlers } from './registry';

/**
 * The engine's dispatch without its store: the same validation as createCore — against the
 * contract's own spec of each method given — over the handlers given: methods that read nothing
 * saved (a one-shot `amw scan` opens, migrates and locks no SQLite file, and loads none of the
 * SSH and stage code). Only the specs it serves are loaded, not the contract: building every
 * method's schemas was a tenth of an empty scan's start-up. Any other method is an
 * UNKNOWN_METHOD here.
 */
export function createLocalCore<M extends MethodName>(
  specs: Pick<Contract, NoInfer<M>>,
  handlers: Pick<Handlers, M>,
) {
  return {
    async call<K extends M>(
      method: K,
      input: Input<K>,
      ctx: CallContext = { transport: 'cli' },
    ): Promise<Output<K>> {
      const res = await dispatchTo(specs, handlers, method, input, ctx);
      if (!res.ok) throw fromWireError(res.error);
      return res.value as Output<K>;
    },
  };
}
