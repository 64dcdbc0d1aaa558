import type { Language } from '../../shared/api';
import type { Translate } from '../../shared/i18n';

/** Everything a command touches of the outside world, so tests can run the CLI in-process. */
export interface CliIO {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
  /** Resolves when the user asks to stop a long-running command (Ctrl+C). */
  interrupted: () => Promise<void>;
  /** All of standard input (for --password-stdin). */
  readStdin: () => Promise<string>;
  /** Standard input as a stream, for commands that must not hold it all (amw doctor -). */
  stdinStream?: () => NodeJS.ReadableStream;
}

export interface GlobalOptions {
  db?: string;
  knownHosts?: string;
  lang: Language;
}

export interface CommandEnv {
  io: CliIO;
  t: Translate;
  global: GlobalOptions;
}

/** Exit codes of the CLI contract: scripts and CI depend on them. */
export const EXIT = { ok: 0, failed: 1, error: 2 } as const;

/** Thrown inside a command to end it with a code once its output is written. */
export class ExitWith extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

export function printJson(io: CliIO, value: unknown): void {
  io.stdout(`${JSON.stringify(value, null, 2)}\n`);
}
