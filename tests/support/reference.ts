import { resolve } from 'node:path';

/** The reference material handed to the project (fixtures, knowledge, corpus): `../shared` beside the repository. */
export const REFERENCE = resolve(__dirname, '../../../shared');
