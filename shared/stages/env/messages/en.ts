import type { Widen } from '../../../i18n/en';

/** Namespace `stage-env`. */
export const en = {
  name: 'Environment',
} as const;

export type EnvMessages = Widen<typeof en>;
