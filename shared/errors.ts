import { isLocalized, isMsg, type Msg, type MsgParam } from './api/text';
import { en } from './i18n/en';

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

/**
 * The shape of an error on the wire. `detail` is structured, never a stack trace. `text` is the
 * explanation as engine text (`{key, params}`): what the UI and the CLI show, in the reader's
 * language; `message` is the same in English, for logs and for readers that have no dictionary.
 */
export interface WireError {
  code: ErrorCode;
  message: string;
  detail?: unknown;
  text?: Msg;
}

/**
 * An error the engine raises on purpose, with a stable code. Give its explanation as a message
 * (`msg('errors.text.noStageRun', {id})`) so it reads in the user's language wherever it is shown;
 * a plain string is English only (kept for texts nobody but a developer sees).
 */
export class AmwError extends Error {
  readonly code: ErrorCode;
  readonly detail?: unknown;
  readonly text?: Msg;

  constructor(code: ErrorCode, message: string | Msg, detail?: unknown) {
    super(typeof message === 'string' ? message : englishOf(message));
    this.name = 'AmwError';
    this.code = code;
    this.detail = detail;
    if (typeof message !== 'string') this.text = message;
  }

  toWire(): WireError {
    const wire: WireError = { code: this.code, message: this.message };
    if (this.detail !== undefined) wire.detail = this.detail;
    if (this.text) wire.text = this.text;
    return wire;
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
  return new AmwError(wire.code, isMsg(wire.text) ? wire.text : wire.message, wire.detail);
}

/**
 * An error's explanation as a message parameter (an error inside another's): its text, else its
 * connection-failure key filled from its detail, else its English message.
 */
export function errorText(err: AmwError | WireError): Msg | string {
  if (isMsg(err.text)) return err.text;
  const detail = (err.detail ?? {}) as Record<string, unknown>;
  if (typeof detail.messageKey === 'string') {
    const params: Record<string, MsgParam> = {};
    for (const [k, v] of Object.entries(detail))
      if (typeof v === 'string' || typeof v === 'number') params[k] = v;
    return { key: detail.messageKey, params };
  }
  return err.message;
}

/**
 * Any thrown value as a parameter of a stored sentence (a host that could not be reached): the
 * error's own words when it has them, each string bounded to `max` characters (host output).
 */
export function errorParam(err: unknown, max = 300): MsgParam {
  const said = errorText(toWireError(err));
  if (typeof said === 'string') return said.slice(0, max);
  const params: Record<string, MsgParam> = {};
  for (const [k, v] of Object.entries(said.params ?? {}))
    params[k] = typeof v === 'string' ? v.slice(0, max) : v;
  return { key: said.key, params };
}

/**
 * A message in English without i18next (errors are made everywhere, also where no translator
 * is set up): the app's English dictionary, `{{name}}` filled in, `_one`/`_other` by `count`.
 * A key outside it (another namespace) reads as the key and its parameters.
 */
export function englishOf(text: Msg): string {
  const params: Record<string, string> = {};
  for (const [k, v] of Object.entries(text.params ?? {})) params[k] = englishParam(v);
  const count = text.params?.count;
  const template =
    lookup(text.key) ??
    (typeof count === 'number' ? lookup(`${text.key}_${count === 1 ? 'one' : 'other'}`) : null);
  if (template === null)
    return Object.keys(params).length ? `${text.key} ${JSON.stringify(params)}` : text.key;
  return template.replace(/\{\{(\w+)\}\}/g, (_, name: string) => params[name] ?? '');
}

function englishParam(v: MsgParam): string {
  if (Array.isArray(v)) return v.map(englishParam).join(v.some(isMsg) ? ' ' : ', ');
  if (isMsg(v)) return englishOf(v);
  if (isLocalized(v)) return v.en;
  return String(v);
}

function lookup(key: string): string | null {
  let node: unknown = en;
  for (const part of key.split('.')) {
    if (typeof node !== 'object' || node === null) return null;
    node = (node as Record<string, unknown>)[part];
  }
  return typeof node === 'string' ? node : null;
}
