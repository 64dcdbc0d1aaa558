import { createHash } from 'node:crypto';
import { createReadStream, readFileSync, renameSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Db } from './open';
import { nowIso } from './open';
import { mkdirPrivate, PRIVATE_FILE } from './private-files';

/**
 * Large evidence (raw outputs, dumps, profiles) is kept as files named by their sha256 under
 * `<data dir>/artifacts/ab/abcdef…`, with one `artifacts` row each.
 */
export class ArtifactStore {
  constructor(
    private readonly db: Db,
    /** The data dir (artifacts live under it; stages may keep gathered folders beside them). */
    readonly dataDir: string,
  ) {}

  pathOf(sha256: string): string {
    return join(this.dataDir, 'artifacts', sha256.slice(0, 2), sha256);
  }

  /** A stored artifact's text (UTF-8). */
  readText(sha256: string): string {
    return readFileSync(this.pathOf(sha256), 'utf8');
  }

  put(content: Buffer | string, kind: string, mediaType = 'text/plain'): string {
    const buf = typeof content === 'string' ? Buffer.from(content) : content;
    const sha256 = createHash('sha256').update(buf).digest('hex');
    const file = this.pathOf(sha256);
    if (!existsSync(file)) {
      mkdirPrivate(join(this.dataDir, 'artifacts', sha256.slice(0, 2)));
      // write-then-rename: a crash never leaves a half file under the final name
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, buf, { mode: PRIVATE_FILE });
      renameSync(tmp, file);
    }
    this.db
      .prepare(
        'INSERT OR IGNORE INTO artifacts (sha256, kind, size, media_type, created_at) VALUES (?, ?, ?, ?, ?)',
      )
      .run(sha256, kind, buf.length, mediaType, nowIso());
    return sha256;
  }

  list(): { sha256: string; size: number; kind: string }[] {
    return this.db.prepare('SELECT sha256, size, kind FROM artifacts ORDER BY sha256').all() as {
      sha256: string;
      size: number;
      kind: string;
    }[];
  }
}

/** Streams a file through sha256, checking the signal between chunks. */
export function hashFile(path: string, signal?: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    const stream = createReadStream(path);
    const onAbort = () => stream.destroy(new Error('aborted'));
    signal?.addEventListener('abort', onAbort, { once: true });
    stream.on('data', (chunk) => hash.update(chunk));
    stream.on('error', (err) => {
      signal?.removeEventListener('abort', onAbort);
      reject(err);
    });
    stream.on('end', () => {
      signal?.removeEventListener('abort', onAbort);
      resolve(hash.digest('hex'));
    });
  });
}
