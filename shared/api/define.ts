import type * as z from 'zod';

/**
 * One method of the contract: its zod input schema and, as a phantom type, its output.
 * Inputs are validated where they enter the core; outputs are produced by the core itself.
 */
export interface MethodSpec<I extends z.ZodType = z.ZodType, O = unknown> {
  readonly input: I;
  /** Phantom: carries the output type only; never set at run time. */
  readonly __output?: O;
}

/** `method(schema).returns<Output>()` keeps input and output side by side in the contract file. */
export function method<I extends z.ZodType>(input: I) {
  return {
    returns<O>(): MethodSpec<I, O> {
      return { input };
    },
  };
}

/** One pushed event: its payload type as a phantom. */
export interface EventSpec<P = unknown> {
  readonly __payload?: P;
}

export function event<P>(): EventSpec<P> {
  return {};
}
