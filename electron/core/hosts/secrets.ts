import { AmwError } from '../../../shared/errors';
import { msg } from '../../../shared/api/text';
import type { Db } from '../db/open';
import { nowIso } from '../db/open';

/**
 * Encrypts with a key the workbench never sees. In the desktop app this is Electron's safeStorage
 * (Keychain, DPAPI, libsecret); serve mode and the CLI have none, so they cannot remember secrets.
 */
export interface SecretCipher {
  encrypt(plain: string): Buffer;
  decrypt(cipher: Buffer): string;
}

export class SecretStore {
  constructor(
    private readonly db: Db,
    private readonly cipher: SecretCipher | null,
  ) {}

  get available(): boolean {
    return this.cipher !== null;
  }

  remember(hostId: number, password: string): void {
    if (!this.cipher) {
      throw new AmwError('VALIDATION', msg('errors.text.passwordsDesktopOnly'));
    }
    this.db
      .prepare(
        `INSERT INTO secrets (host_id, kind, cipher, created_at) VALUES (?, 'password', ?, ?)
         ON CONFLICT (host_id) DO UPDATE SET cipher = excluded.cipher, created_at = excluded.created_at`,
      )
      .run(hostId, this.cipher.encrypt(password), nowIso());
  }

  forget(hostId: number): void {
    this.db.prepare('DELETE FROM secrets WHERE host_id = ?').run(hostId);
  }

  has(hostId: number): boolean {
    return !!this.db.prepare('SELECT 1 FROM secrets WHERE host_id = ?').get(hostId);
  }

  /** The remembered password, decrypted only for the moment it is used. */
  password(hostId: number): string | undefined {
    if (!this.cipher) return undefined;
    const row = this.db.prepare('SELECT cipher FROM secrets WHERE host_id = ?').get(hostId) as
      { cipher: Buffer } | undefined;
    if (!row) return undefined;
    try {
      return this.cipher.decrypt(row.cipher);
    } catch {
      return undefined; // keychain changed (another user, reinstalled OS): as if never remembered
    }
  }
}
