import { existsSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { AmwError } from '../../../../shared/errors';
import { msg } from '../../../../shared/api/text';
import type { StageServices } from '../define';

/** `~/…` as a shell reads it: typed in the app's forms, no shell expands it first. */
function fromHome<T extends string | null | undefined>(path: T): T | string {
  return path === '~' || path?.startsWith('~/') ? join(homedir(), path.slice(1)) : path;
}

/**
 * The folder a code run scans: an absolute path (or `~/…`) as given; a relative one (or none)
 * against the project's code location, so a project's stage runs without retyping where its code
 * is, else against where the engine runs.
 */
export function resolveCodeFolder(
  services: Pick<StageServices, 'sessions'>,
  path: string | undefined,
  at: { sessionId?: number; project?: string },
): string {
  const project =
    at.project ?? (at.sessionId ? services.sessions.session(at.sessionId).project : null);
  path = fromHome(path);
  const base = fromHome(project ? services.sessions.project(project).codeLocation : null);
  const usableBase = base && isAbsolute(base) ? base : null;
  const folder =
    path && isAbsolute(path)
      ? path
      : usableBase
        ? resolve(usableBase, path ?? '.')
        : path
          ? resolve(path)
          : null;
  if (!folder)
    throw new AmwError('VALIDATION', 'The code stage needs a folder.', {
      issues: [{ path: 'path', message: 'stage-code:noPath' }],
    });
  if (!existsSync(folder) || !statSync(folder).isDirectory())
    throw new AmwError('NOT_FOUND', msg('errors.text.notAFolderHere', { path: folder }), {
      path: folder,
    });
  return folder;
}
