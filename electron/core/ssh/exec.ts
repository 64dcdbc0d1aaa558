import type { Client, ClientChannel } from 'ssh2';
import { AmwError } from '../../../shared/errors';
import { msg } from '../../../shared/api/text';

export interface ExecOptions {
  /** Written to the command's stdin, then closed (how probe scripts travel: one round trip). */
  stdin?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Per stream; output past it is dropped and `truncated` says so. */
  maxBytes?: number;
}

export interface ExecResult {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  truncated: boolean;
  durationMs: number;
}

const DEFAULT_MAX = 8 * 1024 * 1024;

/** How one remote command ended: its exit code or the signal that ended it. */
export interface CommandEnd {
  code: number | null;
  signal: string | null;
  durationMs: number;
}

/**
 * Starts one command on an open connection and settles when it ends; `attach` takes its output as
 * it comes. Cancellation and timeouts close the channel (and ask the server to kill the process),
 * so nothing keeps running on the host; a channel that closes without an exit status or signal
 * is a dropped connection.
 */
export function runCommand(
  client: Client,
  command: string,
  opts: Pick<ExecOptions, 'stdin' | 'timeoutMs' | 'signal'>,
  attach: (channel: ClientChannel) => void,
): Promise<CommandEnd> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    if (opts.signal?.aborted)
      return reject(new AmwError('CANCELLED', 'Cancelled before the command started.'));
    client.exec(command, (err, channel: ClientChannel) => {
      if (err)
        return reject(
          new AmwError(
            'DISCONNECTED',
            msg('errors.text.commandStartFailed', { error: err.message }),
            { cause: err.message },
          ),
        );
      let settled = false;
      const settle = () => {
        if (settled) return false;
        settled = true;
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
        return true;
      };
      const stop = (error: AmwError) => {
        if (!settle()) return;
        try {
          channel.signal('KILL');
        } catch {
          // older servers do not take signals; closing the channel still ends the session
        }
        channel.close();
        reject(error);
      };
      const onAbort = () => stop(new AmwError('CANCELLED', 'The remote command was cancelled.'));
      const timer = opts.timeoutMs
        ? setTimeout(
            () =>
              stop(
                new AmwError(
                  'COMMAND_TIMEOUT',
                  msg('errors.text.commandTimeout', {
                    seconds: Math.round(opts.timeoutMs! / 1000),
                  }),
                  { timeoutMs: opts.timeoutMs },
                ),
              ),
            opts.timeoutMs,
          )
        : undefined;
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      attach(channel);
      channel.on('close', (code: number | null, signal?: string) => {
        if (settled) return;
        // sshd always reports an exit status or signal for a command that ended; neither means
        // the connection went away under it
        if ((code === null || code === undefined) && !signal)
          return stop(new AmwError('DISCONNECTED', msg('errors.text.droppedDuring')));
        settle();
        resolve({ code: code ?? null, signal: signal ?? null, durationMs: Date.now() - started });
      });
      channel.on('error', (e: Error) =>
        stop(new AmwError('DISCONNECTED', msg('errors.text.remoteFailed', { error: e.message }))),
      );
      channel.end(opts.stdin ?? '');
    });
  });
}

/**
 * Runs one command over an open connection and collects its output (up to `maxBytes` a stream).
 * The command string must come from remoteCommand() or a fixed probe invocation.
 */
export async function exec(
  client: Client,
  command: string,
  opts: ExecOptions = {},
): Promise<ExecResult> {
  const max = opts.maxBytes ?? DEFAULT_MAX;
  const out: Buffer[] = [];
  const errOut: Buffer[] = [];
  let outBytes = 0;
  let errBytes = 0;
  let truncated = false;
  const collect = (which: 'out' | 'err') => (chunk: Buffer) => {
    const size = which === 'out' ? outBytes : errBytes;
    if (size >= max) {
      truncated = true;
      return;
    }
    const part = chunk.subarray(0, max - size);
    if (part.length < chunk.length) truncated = true;
    if (which === 'out') {
      out.push(part);
      outBytes += part.length;
    } else {
      errOut.push(part);
      errBytes += part.length;
    }
  };
  const end = await runCommand(client, command, opts, (channel) => {
    channel.on('data', collect('out'));
    channel.stderr.on('data', collect('err'));
  });
  return {
    ...end,
    stdout: Buffer.concat(out).toString('utf8'),
    stderr: Buffer.concat(errOut).toString('utf8'),
    truncated,
  };
}
