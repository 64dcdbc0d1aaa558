import { createCore, type Core } from '../../core/api/core';
import type { CommandEnv } from '../io';

/** Opens the engine for one command and always closes it, whatever the command does. */
export async function withCore<T>(env: CommandEnv, fn: (core: Core) => Promise<T>): Promise<T> {
  const core = createCore({ db: env.global.db, env: env.io.env });
  try {
    return await fn(core);
  } finally {
    await core.close();
  }
}
