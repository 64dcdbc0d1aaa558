import { existsSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import ssh2, { type ParsedKey } from 'ssh2';
import { AmwError } from '../../../shared/errors';
import { msg } from '../../../shared/api/text';
import { fsErrorText } from '../fs-error';

// ssh2 is CommonJS: Node's ESM loader offers only its default export.
const { utils } = ssh2;

export interface Identity {
  file: string;
  key: ParsedKey;
}

/** What ssh(1) tries when no IdentityFile is given. */
export const DEFAULT_IDENTITIES = ['id_ed25519', 'id_ecdsa', 'id_rsa'].map((f) =>
  join(homedir(), '.ssh', f),
);

export const expandHome = (p: string): string =>
  p === '~' ? homedir() : p.startsWith('~/') ? join(homedir(), p.slice(2)) : p;

/**
 * Loads a private key (OpenSSH or PEM; ed25519, ecdsa, rsa). Refuses keys readable by others, as
 * ssh(1) does. Encrypted keys ask for their passphrase through `ask`; the passphrase is used once
 * and never kept.
 */
export async function loadIdentity(
  file: string,
  ask?: (file: string) => Promise<string | null>,
): Promise<Identity> {
  const path = expandHome(file);
  let data: Buffer;
  try {
    const st = statSync(path);
    if (process.platform !== 'win32' && (st.mode & 0o077) !== 0) {
      throw new AmwError(
        'KEY_UNREADABLE',
        msg('errors.text.keyTooOpen', {
          mode: (st.mode & 0o777).toString(8).padStart(4, '0'),
          path,
        }),
        { file: path, reason: 'permissions' },
      );
    }
    data = readFileSync(path);
  } catch (err) {
    if (err instanceof AmwError) throw err;
    throw new AmwError(
      'KEY_UNREADABLE',
      msg('errors.text.keyUnreadable', { path, error: fsErrorText(err) }),
      {
        file: path,
        reason: 'unreadable',
      },
    );
  }
  let parsed = utils.parseKey(data);
  if (parsed instanceof Error && /encrypted|passphrase/i.test(parsed.message)) {
    const passphrase = ask ? await ask(path) : null;
    if (passphrase === null) {
      throw new AmwError('KEY_UNREADABLE', msg('errors.text.keyNeedsPassphrase', { path }), {
        file: path,
        reason: 'passphrase',
      });
    }
    parsed = utils.parseKey(data, passphrase);
    if (parsed instanceof Error) {
      throw new AmwError('KEY_UNREADABLE', msg('errors.text.keyWrongPassphrase', { path }), {
        file: path,
        reason: 'passphrase',
      });
    }
  }
  if (parsed instanceof Error) {
    throw new AmwError(
      'KEY_UNREADABLE',
      msg('errors.text.keyNotUsable', { path, error: parsed.message }),
      {
        file: path,
        reason: 'format',
      },
    );
  }
  const key = Array.isArray(parsed) ? parsed[0] : parsed;
  if (!key || !key.isPrivateKey()) {
    throw new AmwError('KEY_UNREADABLE', msg('errors.text.keyNoPrivate', { path }), {
      file: path,
      reason: 'format',
    });
  }
  return { file: path, key };
}

/** Explicit identity files must load; the defaults are tried quietly when present and usable. */
export async function loadIdentities(
  explicit: string[] | undefined,
  ask?: (file: string) => Promise<string | null>,
): Promise<Identity[]> {
  if (explicit?.length) return Promise.all(explicit.map((f) => loadIdentity(f, ask)));
  const out: Identity[] = [];
  for (const file of DEFAULT_IDENTITIES) {
    if (!existsSync(file)) continue;
    try {
      out.push(await loadIdentity(file, undefined));
    } catch {
      // like ssh(1): a default key that cannot be used is skipped
    }
  }
  return out;
}
