import { randomUUID } from 'node:crypto';
import type { HostKeyInfo } from '../../../shared/api';
import { AmwError } from '../../../shared/errors';
import { msg } from '../../../shared/api/text';
import type { EventBus } from '../events';

/** How unknown host keys are decided: asked in the UI, or fixed by a CLI flag. */
export type HostKeyPolicy = 'prompt' | 'accept-new' | 'refuse-new';

const PROMPT_TIMEOUT_MS = 120_000;

/**
 * Unknown host keys in the UI: the engine emits `hostkey.prompt` with the key type and SHA256
 * fingerprint and waits for `hosts.answerHostKey`. No answer in two minutes is a no.
 */
export class HostKeyPrompts {
  private readonly pending = new Map<string, (accept: boolean) => void>();
  private readonly secrets = new Map<string, (secret: string | null) => void>();

  constructor(
    private readonly bus: EventBus,
    private readonly policy: HostKeyPolicy,
    /** The CLI's passphrase, given on stdin or in AMW_KEY_PASSPHRASE (never on argv). */
    private readonly cliPassphrase?: string,
  ) {}

  decide(info: HostKeyInfo): Promise<boolean> {
    if (this.policy === 'accept-new') return Promise.resolve(true);
    if (this.policy === 'refuse-new') return Promise.resolve(false);
    const promptId = randomUUID();
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => finish(false), PROMPT_TIMEOUT_MS);
      const finish = (accept: boolean) => {
        clearTimeout(timer);
        this.pending.delete(promptId);
        resolve(accept);
      };
      this.pending.set(promptId, finish);
      this.bus.emit('hostkey.prompt', { promptId, info });
    });
  }

  /**
   * The passphrase of an encrypted private key, asked in the UI (`secret.prompt`); used once,
   * never stored. The CLI cannot be asked: it uses the passphrase it was given, if any.
   */
  passphrase(file: string): Promise<string | null> {
    if (this.policy !== 'prompt') return Promise.resolve(this.cliPassphrase ?? null);
    const promptId = randomUUID();
    return new Promise((resolve) => {
      const timer = setTimeout(() => finish(null), PROMPT_TIMEOUT_MS);
      const finish = (secret: string | null) => {
        clearTimeout(timer);
        this.secrets.delete(promptId);
        resolve(secret);
      };
      this.secrets.set(promptId, finish);
      this.bus.emit('secret.prompt', { promptId, kind: 'passphrase', file });
    });
  }

  answerSecret(promptId: string, secret: string | null): void {
    const finish = this.secrets.get(promptId);
    if (!finish)
      throw new AmwError('NOT_FOUND', msg('errors.text.promptGone'), {
        promptId,
      });
    finish(secret);
  }

  answer(promptId: string, accept: boolean): void {
    const finish = this.pending.get(promptId);
    if (!finish)
      throw new AmwError('NOT_FOUND', msg('errors.text.hostKeyPromptGone'), { promptId });
    finish(accept);
  }
}
