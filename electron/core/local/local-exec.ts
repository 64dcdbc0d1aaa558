import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFile, mkdir, readFile, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname } from 'node:path';
import { AmwError } from '../../../shared/errors';
import { msg } from '../../../shared/api/text';
import type { ExecOptions, ExecResult } from '../ssh/exec';
import { fsErrorText } from '../fs-error';

export type { ExecOptions, ExecResult } from '../ssh/exec';

// the built-in host that is this machine: its name is part of the contract (the UI knows it)
export { LOCAL_HOST_NAME } from '../../../shared/api/hosts';

const DEFAULT_MAX = 8 * 1024 * 1024;
/** After SIGTERM to the group, what is still alive this much later gets SIGKILL. */
const KILL_GRACE_MS = 2000;

export interface StreamOptions extends Omit<ExecOptions, 'maxBytes'> {
  onStdout?: (chunk: Buffer) => void;
  onStderr?: (chunk: Buffer) => void;
}

/** Kills the command's whole process group: a probe's python and whatever it started. */
function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // the group is gone already
  }
}

/**
 * Runs one command string on this machine through `/bin/sh -c`, exactly as sshd runs a command
 * string on a host: the string must come from remoteCommand()/shellQuote() (ssh/quote.ts) or a
 * fixed probe invocation such as `sh -s`. The child leads its own process group, so a timeout or an
 * abort ends everything it started (SIGTERM, then SIGKILL after a grace period).
 */
function run(
  command: string,
  opts: ExecOptions,
  sink: (which: 'out' | 'err', chunk: Buffer) => void,
): Promise<Omit<ExecResult, 'stdout' | 'stderr' | 'truncated'>> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    if (opts.signal?.aborted)
      return reject(new AmwError('CANCELLED', 'Cancelled before the command started.'));
    let child: ChildProcess;
    try {
      child = spawn('/bin/sh', ['-c', command], {
        detached: true,
        // like sshd: commands start in the home directory, so relative paths mean the same
        cwd: homedir(),
        stdio: ['pipe', 'pipe', 'pipe'],
        env: process.env,
      });
    } catch (err) {
      return reject(
        new AmwError(
          'PROBE_FAILED',
          msg('errors.text.localStartFailed', { error: (err as Error).message }),
        ),
      );
    }
    let settled = false;
    let killTimer: NodeJS.Timeout | undefined;
    const stop = (error: AmwError) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      killGroup(child, 'SIGTERM');
      killTimer = setTimeout(() => killGroup(child, 'SIGKILL'), KILL_GRACE_MS);
      killTimer.unref();
      child.once('close', () => clearTimeout(killTimer));
      reject(error);
    };
    const onAbort = () => stop(new AmwError('CANCELLED', 'The command was cancelled.'));
    const timer = opts.timeoutMs
      ? setTimeout(
          () =>
            stop(
              new AmwError(
                'COMMAND_TIMEOUT',
                msg('errors.text.commandTimeout', { seconds: Math.round(opts.timeoutMs! / 1000) }),
                { timeoutMs: opts.timeoutMs },
              ),
            ),
          opts.timeoutMs,
        )
      : undefined;
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout!.on('data', (c: Buffer) => sink('out', c));
    child.stderr!.on('data', (c: Buffer) => sink('err', c));
    child.on('error', (e) =>
      stop(new AmwError('PROBE_FAILED', msg('errors.text.localFailed', { error: e.message }))),
    );
    child.on('close', (code, signal) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      resolve({ code, signal, durationMs: Date.now() - started });
    });
    // a command that does not read its stdin closes the pipe early: that is not an error
    child.stdin!.on('error', () => undefined);
    child.stdin!.end(opts.stdin ?? '');
  });
}

/** Same contract as ssh/exec.ts `exec`: buffered output, capped per stream, `truncated` says so. */
export async function execLocal(command: string, opts: ExecOptions = {}): Promise<ExecResult> {
  const max = opts.maxBytes ?? DEFAULT_MAX;
  const parts = { out: [] as Buffer[], err: [] as Buffer[] };
  const size = { out: 0, err: 0 };
  let truncated = false;
  const res = await run(command, opts, (which, chunk) => {
    if (size[which] >= max) {
      truncated = true;
      return;
    }
    const part = chunk.subarray(0, max - size[which]);
    if (part.length < chunk.length) truncated = true;
    parts[which].push(part);
    size[which] += part.length;
  });
  return {
    ...res,
    stdout: Buffer.concat(parts.out).toString('utf8'),
    stderr: Buffer.concat(parts.err).toString('utf8'),
    truncated,
  };
}

/** Output handed over as it arrives (a monitor, a long launch); resolves with how it ended. */
export function streamLocal(
  command: string,
  opts: StreamOptions = {},
): Promise<Omit<ExecResult, 'stdout' | 'stderr' | 'truncated'>> {
  return run(command, opts, (which, chunk) =>
    which === 'out' ? opts.onStdout?.(chunk) : opts.onStderr?.(chunk),
  );
}

export interface TransferResult {
  bytes: number;
  sha256: string;
}

async function sha256Of(path: string): Promise<string> {
  return createHash('sha256')
    .update(await readFile(path))
    .digest('hex');
}

/**
 * File transfer on this machine is a copy, checksummed like a transfer between hosts. Both
 * directions are the same operation; the two names mirror an SFTP put/get.
 */
export async function copyLocal(from: string, to: string): Promise<TransferResult> {
  const st = await stat(from).catch((err: Error) => {
    throw new AmwError(
      'NOT_FOUND',
      msg('errors.text.cannotRead', { path: from, error: fsErrorText(err) }),
      { path: from },
    );
  });
  if (!st.isFile())
    throw new AmwError('VALIDATION', msg('errors.text.notAFile', { path: from }), { path: from });
  await mkdir(dirname(to), { recursive: true });
  await copyFile(from, to);
  const [a, b] = await Promise.all([sha256Of(from), sha256Of(to)]);
  if (a !== b) throw new AmwError('PROBE_FAILED', msg('errors.text.copyDiffers', { from, to }));
  return { bytes: st.size, sha256: a };
}

/** The exec/stream/file surface a stage or the inventory uses, the same for every transport. */
export interface HostTransport {
  readonly kind: 'local' | 'ssh';
  exec(command: string, opts?: ExecOptions): Promise<ExecResult>;
  stream(
    command: string,
    opts?: StreamOptions,
  ): Promise<Omit<ExecResult, 'stdout' | 'stderr' | 'truncated'>>;
  put(localPath: string, hostPath: string): Promise<TransferResult>;
  get(hostPath: string, localPath: string): Promise<TransferResult>;
}

export const localTransport: HostTransport = {
  kind: 'local',
  exec: execLocal,
  stream: streamLocal,
  put: copyLocal,
  get: copyLocal,
};
