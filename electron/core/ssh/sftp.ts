import type { Client, SFTPWrapper } from 'ssh2';
import { msg } from '../../../shared/api/text';
import { AmwError } from '../../../shared/errors';

/** An SFTP session on a connected client; a server without the subsystem is a DISCONNECTED error. */
export const sftpOf = (client: Client): Promise<SFTPWrapper> =>
  new Promise((resolve, reject) =>
    client.sftp((err, sftp) =>
      err
        ? reject(
            new AmwError(
              'DISCONNECTED',
              msg('errors.text.sftpUnavailable', { error: err.message }),
            ),
          )
        : resolve(sftp),
    ),
  );
