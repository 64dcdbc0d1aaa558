import { execFileSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The one way the workbench runs git on a user's folder. A scanned checkout is untrusted: its
 * `.git/config` can name commands git runs on its own (core.fsmonitor runs on `ls-files` and
 * `status`, hooks, external diff and textconv drivers, pagers, ssh and credential helpers). Every
 * call here overrides those on the command line, where `-c` outranks the repository's config,
 * and runs with a clean git environment: nothing prompts, nothing writes optional locks, no
 * inherited GIT_DIR points it elsewhere.
 *
 * `safe.directory` is left as git applies it: a checkout owned by another user is refused by
 * git ("dubious ownership"), and callers fall back to reading the folder without git. The
 * overrides are not a reason to vouch for such a checkout.
 */
export const UNTRUSTED_REPO_CONFIG: readonly string[] = [
  'core.fsmonitor=false',
  'core.untrackedCache=false',
  'core.hooksPath=/dev/null',
  'core.pager=cat',
  'core.editor=false',
  'core.sshCommand=false',
  'core.gitProxy=',
  'core.askPass=',
  'core.alternateRefsCommand=',
  'credential.helper=',
  'diff.external=',
  'sequence.editor=false',
  'gpg.program=false',
  'protocol.allow=never',
  'submodule.recurse=false',
];

/** Environment git reads that could redirect it or make it prompt; removed for every call. */
const GIT_ENV = /^GIT_/;

export interface SafeGitOptions {
  /** Default 10 s: git on a local folder never needs longer for what we ask. */
  timeout?: number;
  /** Default 64 MiB of output. */
  maxBuffer?: number;
  env?: NodeJS.ProcessEnv;
}

export function safeGitArgs(cwd: string, args: readonly string[]): string[] {
  return [
    ...UNTRUSTED_REPO_CONFIG.flatMap((c) => ['-c', c]),
    '--no-optional-locks',
    '--no-pager',
    '-C',
    cwd,
    ...args,
  ];
}

export function safeGitEnv(base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(base)) if (!GIT_ENV.test(k)) env[k] = v;
  return {
    ...env,
    GIT_TERMINAL_PROMPT: '0',
    GIT_OPTIONAL_LOCKS: '0',
    GIT_PAGER: 'cat',
    GIT_ASKPASS: '',
    SSH_ASKPASS: '',
    GIT_NO_REPLACE_OBJECTS: '1',
  };
}

/** Runs `git -C cwd ARGS` safely; returns stdout, throws if git fails (callers fall back). */
export function gitSync(cwd: string, args: readonly string[], opts: SafeGitOptions = {}): string {
  return execFileSync('git', safeGitArgs(cwd, args), {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
    timeout: opts.timeout ?? 10_000,
    maxBuffer: opts.maxBuffer ?? 64 * 1024 * 1024,
    env: safeGitEnv(opts.env),
  });
}

/**
 * Whether git could find a work tree at `dir`: a `.git` folder or file (a linked worktree's, a
 * submodule's) in it or a folder above. Git looks for nothing else here, as its environment is
 * cleared (no GIT_DIR, no GIT_WORK_TREE); it walks up the real path, so a symlinked folder is
 * resolved first. Where this is false, `git ls-files` would fail anyway: callers skip spawning it
 * (1-4 ms of CPU per spawn from a one-shot `amw scan`, mostly the kernel's).
 */
export function mayBeInCheckout(dir: string): boolean {
  let at: string;
  try {
    at = realpathSync.native(dir);
  } catch {
    return false;
  }
  for (;;) {
    if (existsSync(join(at, '.git'))) return true;
    const up = dirname(at);
    if (up === at) return false;
    at = up;
  }
}
