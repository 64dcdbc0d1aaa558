import { contract, type MethodName, type Output, type ParsedInput } from '../../../shared/api';
import { dispatchTo, type CallContext, type CallResult } from './dispatch';

export { validationError, type CallContext, type CallResult } from './dispatch';

export type Handler<K extends MethodName> = (
  input: ParsedInput<K>,
  ctx: CallContext,
) => Output<K> | Promise<Output<K>>;

export type Handlers = { [K in MethodName]: Handler<K> };

/**
 * The one door into the core: checks the method name, validates the input against the contract,
 * runs the handler and returns a result union that never throws. Every transport goes through it.
 * A method the given handlers lack (a core without a store) is UNKNOWN_METHOD.
 */
export function dispatch(
  handlers: Partial<Handlers>,
  method: unknown,
  input: unknown,
  ctx: CallContext,
): Promise<CallResult> {
  return dispatchTo(contract, handlers, method, input, ctx);
}
