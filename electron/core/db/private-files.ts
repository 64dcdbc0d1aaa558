import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  rmSync,
  statSync,
  statfsSync,
} from 'node:fs';
import { join } from 'node:path';

/** Data at rest holds hosts, users and key paths: private to the user. */
export const PRIVATE_DIR = 0o700;
export const PRIVATE_FILE = 0o600;

/** Creates a directory 0700 (and any missing parents of it 0700 too). */
export function mkdirPrivate(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR });
}

/** Tightens a file or directory that exists with group/other bits set; errors are ignored. */
export function tighten(path: string, mode: number): void {
  try {
    const st = statSync(path);
    if ((st.mode & 0o777) !== mode) chmodSync(path, mode);
  } catch {
    // not there, or not ours: nothing to do
  }
}

/** Creates an empty file 0600 if it does not exist, so whatever SQLite derives from it is 0600. */
export function touchPrivate(file: string): void {
  if (existsSync(file)) return tighten(file, PRIVATE_FILE);
  closeSync(openSync(file, 'a', PRIVATE_FILE));
}

/** A partial file names the process that writes it: `….<pid>.partial` / `….<pid>.tmp`. */
const PARTIAL = /\.(?:(\d+)\.)?(?:partial|tmp)(?:-journal|-wal|-shm)?$/;

function alive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes what a killed backup or artifact write left behind (`*.partial`, its `-journal`,
 * `*.tmp`), unless the process that writes it is still running. Returns what was removed.
 */
export function sweepPartials(dataDir: string): string[] {
  const removed: string[] = [];
  const sweep = (dir: string, depth: number) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const path = join(dir, e.name);
      if (e.isDirectory() && depth > 0) sweep(path, depth - 1);
      else if (e.isFile()) {
        const m = PARTIAL.exec(e.name);
        if (!m || (m[1] && alive(Number(m[1])))) continue;
        rmSync(path, { force: true });
        removed.push(path);
      }
    }
  };
  sweep(join(dataDir, 'backups'), 0);
  sweep(join(dataDir, 'artifacts'), 1);
  return removed;
}

/** Bytes free for this user on the file system holding `path` (null when unknown). */
export function freeBytes(path: string): number | null {
  try {
    const s = statfsSync(path);
    return Number(s.bavail) * Number(s.bsize);
  } catch {
    return null;
  }
}
