import type { Input, Language, MethodName, Output } from '../../../shared/api';
import { fromWireError } from '../../../shared/errors';
import { analyzeHandler } from '../stages/code/analyze-handler';
import { dispatch, type CallContext, type Handlers } from './registry';

/** The methods that need no database: the only ones a core without a store answers. */
export type LocalMethod = 'code.analyze';

/**
 * The engine's dispatch without its store: the same contract validation and the same handlers
 * as createCore, for the methods that read nothing saved (a one-shot `amw scan` opens, migrates
 * and locks no SQLite file, and loads none of the SSH and stage code). Any other method is an
 * UNKNOWN_METHOD here.
 */
export function createLocalCore(opts: { language: () => Language }) {
  const handlers: Partial<Handlers> = {
    'code.analyze': analyzeHandler(opts.language, { oneThread: true }),
  };
  return {
    async call<K extends LocalMethod>(
      method: K,
      input: Input<K>,
      ctx: CallContext = { transport: 'cli' },
    ): Promise<Output<K>> {
      const res = await dispatch(handlers, method as MethodName, input, ctx);
      if (!res.ok) throw fromWireError(res.error);
      return res.value as Output<K>;
    },
  };
}
