/**
 * Texts of the collective launcher (`electron/core/stages/distributed/collective`), keys under
 * `collective.` of namespace `stage-distributed`. Filled by the launcher's owner.
 */
export const collectiveEn = {
  notBuilt: 'The collective launcher is not part of this build yet: no collective was run.',
} as const;
