/**
 * Stable error codes that cross every boundary (IPC, WebSocket, CLI). The UI and the CLI explain
 * errors by code, so a code is never renamed once shipped.
 */
export const ERROR_CODES = [
  'VALIDATION',
  'UNKNOWN_METHOD',
  'BAD_MESSAGE',
  'PAYLOAD_TOO_LARGE',
  'NOT_FOUND',
  'CANCELLED',
  'CONFLICT',
  'UNAUTHORIZED',
  'DB_TOO_NEW',
  'DB_MIGRATION_EDITED',
  'DB_CORRUPT',
  'DB_UNWRITABLE',
  'DB_BUSY',
  'DB_DISK_FULL',
  'HOST_KEY_MISMATCH',
  'HOST_KEY_UNKNOWN',
  'AUTH_FAILED',
  'CONNECT_TIMEOUT',
  'CONNECTION_REFUSED',
  'DNS',
  'DISCONNECTED',
  'JUMP_FAILED',
  'KEY_UNREADABLE',
  'COMMAND_TIMEOUT',
  'SSH_CONFIG',
  'PROBE_FAILED',
  'INTERNAL',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** The shape of an error on the wire. `detail` is structured, never a stack trace. */
export interface WireError {
  code: ErrorCode;
  message: string;
  detail?: unknown;
}

/** An error the engine raises on purpose, with a stable code. */
export class AmwError extends Error {
  readonly code: ErrorCode;
  readonly detail?: unknown;

  constructor(code: ErrorCode, message: string, detail?: unknown) {
    super(message);
    this.name = 'AmwError';
    this.code = code;
    this.detail = detail;
  }

  toWire(): WireError {
    return this.detail === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, detail: this.detail };
  }
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && (ERROR_CODES as readonly string[]).includes(value);
}

/** Any thrown value → a wire error. Unknown failures become INTERNAL with their message only. */
export function toWireError(err: unknown): WireError {
  if (err instanceof AmwError) return err.toWire();
  if (isWireError(err)) return err;
  const message = err instanceof Error ? err.message : String(err);
  // a write that hit a full disk anywhere in the engine: say so, not "Unexpected error"
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'SQLITE_FULL' || code === 'ENOSPC') return { code: 'DB_DISK_FULL', message };
  // damaged pages met while reading: name the damage and the way out, not "Unexpected error"
  if (code === 'SQLITE_CORRUPT' || code === 'SQLITE_NOTADB')
    return { code: 'DB_CORRUPT', message, detail: { dbPath: '' } };
  return { code: 'INTERNAL', message };
}

export function isWireError(value: unknown): value is WireError {
  return (
    typeof value === 'object' &&
    value !== null &&
    isErrorCode((value as { code?: unknown }).code) &&
    typeof (value as { message?: unknown }).message === 'string'
  );
}

/** Rebuild a thrown error on the receiving side of a transport. */
export function fromWireError(wire: WireError): AmwError {
  return new AmwError(wire.code, wire.message, wire.detail);
}
