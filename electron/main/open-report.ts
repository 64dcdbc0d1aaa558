import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';

/** Exported JSON reports end so; the installers associate it with the app. */
export const REPORT_SUFFIX = '.amw.json';
/** The same bound `reports.import` puts on its input. */
const MAX_REPORT_BYTES = 900_000;

/**
 * The report files among the arguments the OS passed (Windows and Linux open a file by starting
 * the app, or a second instance, with its path). Anything else on the command line is ignored.
 */
export function reportPathsFrom(argv: string[], cwd = process.cwd()): string[] {
  return argv
    .filter((a) => !a.startsWith('-') && a.toLowerCase().endsWith(REPORT_SUFFIX))
    .map((a) => resolve(cwd, a))
    .filter((p) => {
      try {
        return statSync(p).isFile();
      } catch {
        return false;
      }
    });
}

/** The report's text for `reports.import`, or null when it is too large to be one of ours. */
export function readReportFile(path: string): string | null {
  if (statSync(path).size > MAX_REPORT_BYTES) return null;
  return readFileSync(path, 'utf8');
}
