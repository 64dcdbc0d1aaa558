import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { Client } from 'ssh2';
import { AmwError } from '../../../shared/errors';
import { msg } from '../../../shared/api/text';
import { exec, runCommand } from '../ssh/exec';
import { remoteCommand } from '../ssh/quote';
import type { HostTransport, StreamOptions, TransferResult } from './local-exec';
import { sftpOf } from '../ssh/sftp';

/** Borrows a pooled connection for one operation (HostService.pool.use with the host's target). */
export type UseClient = <T>(fn: (client: Client) => Promise<T>) => Promise<T>;

const streamOver = (client: Client, command: string, opts: StreamOptions) =>
  runCommand(client, command, opts, (channel) => {
    channel.on('data', (c: Buffer) => opts.onStdout?.(c));
    channel.stderr.on('data', (c: Buffer) => opts.onStderr?.(c));
  });

async function localSha256(path: string): Promise<{ sha256: string; bytes: number }> {
  const h = createHash('sha256');
  let bytes = 0;
  for await (const c of createReadStream(path)) {
    h.update(c as Buffer);
    bytes += (c as Buffer).length;
  }
  return { sha256: h.digest('hex'), bytes };
}

/** `sha256sum` on the host: the transfer is checked end to end, not trusted. */
async function remoteSha256(client: Client, path: string): Promise<string> {
  const r = await exec(client, remoteCommand('sha256sum', '--', path), { timeoutMs: 120_000 });
  const sum = /^([0-9a-f]{64})\b/.exec(r.stdout)?.[1];
  if (r.code !== 0 || !sum)
    throw new AmwError(
      'PROBE_FAILED',
      msg('errors.text.checksumFailed', { path, error: r.stderr.trim() }),
    );
  return sum;
}

async function transfer(
  client: Client,
  dir: 'put' | 'get',
  from: string,
  to: string,
): Promise<TransferResult> {
  const sftp = await sftpOf(client);
  try {
    await new Promise<void>((resolve, reject) => {
      const done = (err: Error | null | undefined) =>
        err
          ? reject(
              new AmwError(
                'PROBE_FAILED',
                msg('errors.text.copyFailed', { from, to, error: err.message }),
              ),
            )
          : resolve();
      if (dir === 'put') sftp.fastPut(from, to, done);
      else sftp.fastGet(from, to, done);
    });
  } finally {
    sftp.end();
  }
  const local = await localSha256(dir === 'put' ? from : to);
  const remote = await remoteSha256(client, dir === 'put' ? to : from);
  if (remote !== local.sha256)
    throw new AmwError('PROBE_FAILED', msg('errors.text.copyDiffers', { from, to }));
  return local;
}

/** The same HostTransport surface as `localTransport`, over a pooled SSH connection. */
export function sshTransport(use: UseClient, signal?: AbortSignal): HostTransport {
  return {
    kind: 'ssh',
    exec: (command, opts = {}) => use((c) => exec(c, command, { signal, ...opts })),
    stream: (command, opts = {}) => use((c) => streamOver(c, command, { signal, ...opts })),
    put: (from, to) => use((c) => transfer(c, 'put', from, to)),
    get: (from, to) => use((c) => transfer(c, 'get', from, to)),
  };
}
