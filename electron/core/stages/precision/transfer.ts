import { createHash } from 'node:crypto';
import { createReadStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import type { Client } from 'ssh2';
import { AmwError } from '../../../../shared/errors';
import { msg } from '../../../../shared/api/text';
import type { JobContext } from '../../jobs/runner';
import { exec } from '../../ssh/exec';
import { remoteCommand } from '../../ssh/quote';
import type { StageServices } from '../define';
import { sftpOf } from '../../ssh/sftp';

type Hosts = StageServices['hosts'];

const step = <T>(fn: (cb: (err: Error | null | undefined, v?: T) => void) => void): Promise<T> =>
  new Promise((resolve, reject) => fn((err, v) => (err ? reject(err) : resolve(v as T))));

export function sha256File(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const h = createHash('sha256');
    createReadStream(path)
      .on('data', (d) => h.update(d))
      .on('error', reject)
      .on('end', () => resolve(h.digest('hex')));
  });
}

function use<T>(
  hosts: Hosts,
  name: string,
  job: Pick<JobContext, 'signal'>,
  password: string | undefined,
  fn: (c: Client) => Promise<T>,
): Promise<T> {
  return hosts.pool.use(hosts.target(name), hosts.connectOptions(name, password, job.signal), fn);
}

/**
 * The baseline's weights and inputs to the target host: downloaded over SFTP into a private
 * temporary folder here, checksummed against what the baseline's harness computed, uploaded to
 * the same path (relative to the login directory) on the target, and the local copy removed.
 * Paths are relative to the SFTP login directory, which is where the harness wrote them.
 */
export async function moveState(
  hosts: Hosts,
  from: string,
  to: string,
  remotePath: string,
  expectedSha: string,
  job: Pick<JobContext, 'signal'>,
  password: string | undefined,
): Promise<{ sha256: string; bytes: number }> {
  const local = mkdtempSync(join(tmpdir(), 'amw-precision-'));
  const file = join(local, 'state.pt');
  try {
    await use(hosts, from, job, password, async (c) => {
      const sftp = await sftpOf(c);
      try {
        await step<void>((cb) => sftp.fastGet(remotePath, file, cb));
      } finally {
        sftp.end();
      }
    });
    const got = await sha256File(file);
    if (got !== expectedSha)
      throw new AmwError(
        'PROBE_FAILED',
        msg('errors.text.weightsChecksum', { from, got, expected: expectedSha }),
        { host: from },
      );
    await use(hosts, to, job, password, async (c) => {
      const sftp = await sftpOf(c);
      try {
        let dir = '';
        for (const part of posix.dirname(remotePath).split('/').filter(Boolean)) {
          dir = dir ? `${dir}/${part}` : part;
          await step<void>((cb) => sftp.mkdir(dir, () => cb(null))); // exists already: fine
        }
        await step<void>((cb) => sftp.fastPut(file, remotePath, cb));
      } finally {
        sftp.end();
      }
    });
    const { size } = statSync(file);
    return { sha256: got, bytes: size };
  } finally {
    rmSync(local, { recursive: true, force: true });
  }
}

/** Fetches a remote file (the tensor copies of tensor mode) into `localFile`. */
export async function fetchFile(
  hosts: Hosts,
  name: string,
  remotePath: string,
  localFile: string,
  job: Pick<JobContext, 'signal'>,
  password: string | undefined,
): Promise<void> {
  await use(hosts, name, job, password, async (c) => {
    const sftp = await sftpOf(c);
    try {
      await step<void>((cb) => sftp.fastGet(remotePath, localFile, cb));
    } finally {
      sftp.end();
    }
  });
}

/** Removes the run's working folder on a host (best effort: the run's result does not depend on it). */
export async function cleanUp(
  hosts: Hosts,
  name: string,
  workdir: string,
  job: Pick<JobContext, 'signal'>,
  password: string | undefined,
): Promise<boolean> {
  try {
    const res = await use(hosts, name, job, password, (c) =>
      exec(c, remoteCommand('rm', '-rf', '--', workdir), { timeoutMs: 60_000 }),
    );
    return res.code === 0;
  } catch {
    return false;
  }
}

/** Whether a path still exists on a host (for tests and for the run's evidence). */
export async function remoteExists(
  hosts: Hosts,
  name: string,
  path: string,
  job: Pick<JobContext, 'signal'>,
  password?: string,
): Promise<boolean> {
  const res = await use(hosts, name, job, password, (c) =>
    exec(c, remoteCommand('test', '-e', path), { timeoutMs: 30_000 }),
  );
  return res.code === 0;
}
