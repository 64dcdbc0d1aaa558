import type { ProfileResult, ProfileWarning } from '../../../../shared/stages/profiling/api';
import { m } from './csv-stream';

/** A node of a multi-host gather or run that gave nothing: its host and why. */
export interface NodeFailure {
  host: string;
  error: string;
}

/**
 * Whether a profile gathered from several nodes is whole, as warnings (first in the list) naming
 * what is missing:
 * a node that failed (its error), a node that answered but gave no rank folder, and — when the
 * world size is known — every rank from 0 to N-1 not found, the last ones included (the import
 * alone sees only gaps below the highest rank it has). Each host's output is under `<host>/`.
 */
export function addCompleteness(
  result: ProfileResult,
  hosts: string[],
  failures: NodeFailure[],
  opts: { perHostFolders: boolean; worldSize?: number },
): void {
  const out: ProfileWarning[] = failures.map((f) => ({
    file: f.host,
    line: null,
    message: m('warn.hostFailed', { host: f.host, error: f.error.slice(0, 300) }),
  }));
  const failed = new Set(failures.map((f) => f.host));
  if (opts.perHostFolders)
    for (const host of hosts)
      if (
        !failed.has(host) &&
        !result.ranks.some((r) => r.dir === host || r.dir.startsWith(`${host}/`))
      )
        out.push({ file: host, line: null, message: m('warn.nodeEmpty', { host }) });
  let kept = result.warnings;
  if (opts.worldSize) {
    const present = new Set(result.ranks.map((r) => r.rank));
    const missing = Array.from({ length: opts.worldSize }, (_, i) => i).filter(
      (i) => !present.has(i),
    );
    // the full list replaces the import's (which stops at the highest rank it saw)
    kept = kept.filter((w) => w.message.key !== 'stage-profiling:warn.missingRanks');
    if (missing.length)
      out.push({
        file: '.',
        line: null,
        message: m('warn.missingRanks', { ranks: missing.join(', ') }),
      });
  }
  result.warnings = [...out, ...kept];
}

/** A rejected node's error as a line of text (the first 300 characters). */
export const failureText = (err: unknown): string =>
  (err instanceof Error ? err.message : String(err)).slice(0, 300);
