import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The file node_exporter's textfile collector reads (it takes `*.prom` in its directory). */
export const TEXTFILE_NAME = 'amw_npu.prom';

/**
 * Writes the metrics for node_exporter's textfile collector atomically: a temporary file in the
 * same directory (a name not ending in .prom, so the collector never reads it half-written),
 * then a rename over the old one — a scrape sees the old file or the new one, never a mix.
 */
export function writeTextfile(dir: string, text: string): string {
  const target = join(dir, TEXTFILE_NAME);
  const tmp = join(dir, `.${TEXTFILE_NAME}.${process.pid}.tmp`);
  try {
    writeFileSync(tmp, text, { mode: 0o644 });
    renameSync(tmp, target);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
  return target;
}
