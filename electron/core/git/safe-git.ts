import { execFileSync } from 'node:child_process';

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
