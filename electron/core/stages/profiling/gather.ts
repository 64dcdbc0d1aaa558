import { existsSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { AmwError } from '../../../../shared/errors';
import { msg } from '../../../../shared/api/text';
import { hashFile } from '../../db/artifacts';
import type { HostService } from '../../hosts/host-service';
import { exec } from '../../ssh/exec';
import { shellQuote } from '../../ssh/quote';
import type { GatheredFile } from './repository';
import { sftpOf } from '../../ssh/sftp';

/**
 * Copies a folder of profiler output off a host into `localDir`, over SFTP, file by file:
 * the host's sha256 of every file first (one command), then each file to `<name>.part` and
 * renamed once its hash matches. A file already here with the host's hash is not copied again,
 * so a gather cut off half-way resumes where it stopped.
 */
export async function gatherFolder(
  hosts: HostService,
  host: string,
  remoteDir: string,
  localDir: string,
  opts: {
    password?: string;
    signal?: AbortSignal;
    onFile?: (done: number, total: number) => void;
  } = {},
): Promise<GatheredFile[]> {
  return hosts.pool.use(
    hosts.target(host),
    hosts.connectOptions(host, opts.password, opts.signal),
    async (c) => {
      const listed = await exec(
        c,
        `cd ${shellQuote(remoteDir)} && find . -type f -print0 | xargs -0 -r sha256sum`,
        { timeoutMs: 600_000, signal: opts.signal, maxBytes: 64 * 2 ** 20 },
      );
      if (listed.code !== 0)
        throw new AmwError(
          'PROBE_FAILED',
          msg('errors.text.listFailed', { dir: remoteDir, host, error: listed.stderr.slice(-300) }),
          {
            host,
          },
        );
      const remote = listed.stdout
        .split('\n')
        .map((l) => /^([0-9a-f]{64}) [ *](.+)$/.exec(l))
        .filter((x): x is RegExpExecArray => !!x)
        .map((x) => ({ sha256: x[1]!, path: posix.normalize(x[2]!).replace(/^\.\//, '') }))
        .filter((f) => !f.path.startsWith('..'));
      const sftp = await sftpOf(c);
      const files: GatheredFile[] = [];
      try {
        let done = 0;
        for (const f of remote) {
          if (opts.signal?.aborted) throw new AmwError('CANCELLED', 'Cancelled while gathering.');
          const local = join(localDir, ...f.path.split('/'));
          mkdirSync(dirname(local), { recursive: true });
          if (!(existsSync(local) && (await hashFile(local)) === f.sha256)) {
            const part = `${local}.part`;
            await new Promise<void>((resolve, reject) =>
              sftp.fastGet(posix.join(remoteDir, f.path), part, (err) =>
                err
                  ? reject(
                      new AmwError(
                        'DISCONNECTED',
                        msg('errors.text.sftpFileFailed', { path: f.path, error: err.message }),
                      ),
                    )
                  : resolve(),
              ),
            );
            const got = await hashFile(part);
            if (got !== f.sha256)
              throw new AmwError(
                'PROBE_FAILED',
                msg('errors.text.changedWhileCopied', { path: f.path, host }),
                {
                  host,
                  path: f.path,
                },
              );
            renameSync(part, local);
          }
          files.push({ host, path: f.path, size: statSync(local).size, sha256: f.sha256 });
          opts.onFile?.(++done, remote.length);
        }
      } finally {
        sftp.end();
      }
      return files;
    },
  );
}
