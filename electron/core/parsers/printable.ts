/* eslint-disable no-control-regex -- matching control characters is the point of this module */
/**
 * Text from a host, a file or a repository, made safe to print on a terminal or put in a warning:
 * control characters (ESC and the rest of C0, DEL, C1), bidirectional overrides and invalid
 * UTF-8 (already U+FFFD after decoding) are shown as visible escapes (`\x1b`, `\u202e`) instead of
 * being sent raw, so a hostile host cannot set the terminal title, recolour or hide output.
 * Newlines and tabs are kept only when `multiline` is set.
 */
const UNSAFE =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff\ufffd]/g;
const UNSAFE_ONE_LINE =
  /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff\ufffd]/g;

const escape = (ch: string): string => {
  const code = ch.charCodeAt(0);
  if (ch === '\ufffd') return '\\ufffd';
  return code < 0x100
    ? `\\x${code.toString(16).padStart(2, '0')}`
    : `\\u${code.toString(16).padStart(4, '0')}`;
};

export function printable(text: string, opts: { multiline?: boolean } = {}): string {
  return text.replace(opts.multiline ? UNSAFE : UNSAFE_ONE_LINE, escape);
}

/** What printable() escapes beyond C0 (below U+0020), which JSON.stringify escapes itself. */
const UNSAFE_IN_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff\ufffd]/g;

/**
 * JSON.stringify's text made printable: it escapes C0 controls but passes C1 controls, bidi
 * overrides and U+FFFD through raw; those are escaped too, as JSON's `\uXXXX` (still valid
 * JSON, the same value). What comes out is text printable() leaves as it is, so it needs no
 * second pass over a scan's megabytes.
 */
export function printableJson(json: string): string {
  // looked for first: a replace with nothing to replace still made a copy of a scan's JSON
  UNSAFE_IN_JSON.lastIndex = 0;
  if (!UNSAFE_IN_JSON.test(json)) return json;
  return json.replace(UNSAFE_IN_JSON, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** True when the text holds something `printable` would escape. */
export function hasUnprintable(text: string): boolean {
  UNSAFE_ONE_LINE.lastIndex = 0;
  return UNSAFE_ONE_LINE.test(text.replace(/[\n\t]/g, ''));
}

/** Warnings one parse keeps: enough to act on; a flood of garbage lines is summed up instead. */
export const MAX_WARNINGS = 200;

/** Collects warnings up to MAX_WARNINGS, counting the rest, so memory stays bounded. */
export class WarningList {
  private readonly items: string[] = [];
  private dropped = 0;
  push(w: string): void {
    if (this.items.length < MAX_WARNINGS) this.items.push(w);
    else this.dropped++;
  }
  get length(): number {
    return this.items.length + this.dropped;
  }
  done(): string[] {
    return this.dropped
      ? [
          ...this.items,
          `${this.dropped} more warnings not shown (the input is mostly not understood)`,
        ]
      : [...this.items];
  }
}
