import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const beside = fileURLToPath(new URL('../../../shared', import.meta.url));

/**
 * The reference material handed to the project (fixtures, knowledge, corpus): `../shared` beside
 * the repository, else AMW_REFERENCE, else where this workplace keeps it (a clone elsewhere).
 */
export const REFERENCE =
  [beside, process.env.AMW_REFERENCE, '/work/shared'].find(
    (dir): dir is string => !!dir && existsSync(dir),
  ) ?? beside;
