import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import type { Language } from '../../shared/api';
import { AmwError } from '../../shared/errors';
import { msg } from '../../shared/api/text';
import { printable, printableJson } from '../core/parsers/printable';
import { jsonPieces } from './json-pieces';
import type { Translate } from '../../shared/i18n';

/** Everything a command touches of the outside world, so tests can run the CLI in-process. */
export interface CliIO {
  stdout: (text: string) => void;
  /** Text printable() leaves as it is (printableJson's), written without a second pass over it. */
  stdoutPrintable?: (text: string) => void;
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

/**
 * JSON on stdout, with nothing raw a terminal would act on (printableJson), written in pieces
 * (jsonPieces: a scan's JSON is megabytes).
 */
export function printJson(io: CliIO, value: unknown): void {
  const out = io.stdoutPrintable ?? io.stdout;
  for (const piece of jsonPieces(value)) out(printableJson(piece));
  out('\n');
}

/**
 * The CLI's output as a terminal sees it: whatever a command prints (host names, npu-smi cells,
 * file names from a scanned repository, parser warnings) goes out with control characters
 * escaped, so a hostile host or repository cannot drive the terminal (title, colours, cursor).
 */
export function printableIO(io: CliIO): CliIO {
  return {
    ...io,
    stdout: (text) => io.stdout(printable(text, { multiline: true })),
    stdoutPrintable: (text) => io.stdout(text),
    stderr: (text) => io.stderr(printable(text, { multiline: true })),
  };
}

/** Standard input for a secret or a pasted file: far more than either, far less than memory. */
export const MAX_STDIN_BYTES = 64 * 1024 * 1024;

/**
 * Reads a stream to its end, asynchronously (the process stays responsive to signals) and never
 * past `limit` bytes: `/dev/zero` or an endless pipe is an error, not a hang or an exhausted heap.
 */
export async function readBounded(
  stream: Readable,
  limit: number,
  what = 'input',
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    size += b.length;
    if (size > limit) {
      stream.destroy();
      throw new AmwError(
        'PAYLOAD_TOO_LARGE',
        msg('errors.text.fileTooLarge', { what, limit: Math.round(limit / 1024 / 1024) }),
        { limit },
      );
    }
    chunks.push(b);
  }
  return Buffer.concat(chunks);
}

/** A file given on the command line (`-` for stdin), read with `readBounded`. */
export async function readInputFile(io: CliIO, file: string, limit: number): Promise<string> {
  if (file === '-') {
    const text = await io.readStdin();
    if (Buffer.byteLength(text) > limit)
      throw new AmwError('PAYLOAD_TOO_LARGE', msg('errors.text.stdinTooLarge', { limit }), {
        limit,
      });
    return text;
  }
  let stream: Readable;
  try {
    stream = createReadStream(file, { highWaterMark: 1 << 20 });
    await new Promise<void>((resolve, reject) => {
      stream.once('open', () => resolve());
      stream.once('error', reject);
    });
  } catch (err) {
    throw new AmwError(
      'NOT_FOUND',
      msg('errors.text.cannotRead', { path: file, error: (err as Error).message }),
      { file },
    );
  }
  return (await readBounded(stream, limit, file)).toString('utf8');
}
