import { open } from 'node:fs/promises';

/**
 * A byte-level RFC 4180 scanner for the profiler's CSV files, the fast path of streamCsv(). It
 * decodes only the fields a reader asked for (a kernel table has 46 columns; the analysis reads
 * 4 or 5), straight from the read buffer, with no per-chunk string of the whole text.
 *
 * It is exact only on what it understands: comma-separated rows ending in `\n` or `\r\n`, fields
 * bare or quoted (`""` inside quotes, newlines inside quotes). On anything else — a quote inside a
 * bare field, text after a closing quote, a bare `\r`, a quote never closed — it stops at the start
 * of that row and returns its offset and line, and the caller reads the rest with papaparse, the
 * maintained parser, so such files read exactly as before (tests/differential).
 */

/** How papaparse guesses a file's line ending (its guessLineEndings, on its first stream chunk). */
export function guessNewline(head: string): '\n' | '\r\n' | '\r' {
  const s = head.replace(/"([^]*?)"/gm, '');
  const r = s.split('\r');
  const n = s.split('\n');
  if (r.length === 1 || (n.length > 1 && n[0]!.length < r[0]!.length)) return '\n';
  let withN = 0;
  for (const x of r) if (x[0] === '\n') withN++;
  return withN >= r.length / 2 ? '\r\n' : '\r';
}

/** papaparse reads a stream 64 KB at a time and guesses the line ending on the first one. */
export const PAPA_FIRST_CHUNK = 65536;

export interface ScanSink {
  /**
   * One row: `count` fields, of which those with `want[i]` set are decoded in `fields` (the others
   * are ''). `fields` is reused: valid only during the call. `blank`: one empty field (a blank
   * line, which papaparse gives as `['']`). Return false to stop reading.
   */
  row(fields: string[], count: number, line: number, blank: boolean): boolean;
  /** Which columns to decode from now on (null: all). */
  want: Uint8Array | null;
}

export type ScanEnd =
  { done: true } | { done: false; offset: number; line: number; newline: '\n' | '\r\n' | '\r' };

const QUOTE = 34;
const COMMA = 44;
const LF = 10;
const CR = 13;
/** Bytes that end a bare field's run of ordinary bytes (one table load per byte in the hot loop). */
const STOPS = new Uint8Array(256);
for (const c of [COMMA, LF, QUOTE, CR]) STOPS[c] = 1;
/** Bytes that stop the run inside quotes. */
const QSTOPS = new Uint8Array(256);
for (const c of [LF, QUOTE]) QSTOPS[c] = 1;
const NEED_MORE = -1;
const GIVE_UP = -2;

export async function scanCsv(
  path: string,
  sink: ScanSink,
  signal?: AbortSignal,
  chunkBytes = 4 << 20,
): Promise<ScanEnd> {
  const fh = await open(path, 'r');
  try {
    let buf = Buffer.allocUnsafe(chunkBytes);
    let len = 0; // valid bytes in buf
    let base = 0; // file offset of buf[0]
    let eof = false;
    const fill = async () => {
      if (len === buf.length) {
        const bigger = Buffer.allocUnsafe(buf.length * 2); // a row longer than the buffer
        buf.copy(bigger, 0, 0, len);
        buf = bigger;
      }
      const { bytesRead } = await fh.read(buf, len, buf.length - len, base + len);
      if (bytesRead === 0) eof = true;
      len += bytesRead;
    };
    // the line ending is guessed on as much as papaparse's first chunk holds, whatever the read size
    while (!eof && len < PAPA_FIRST_CHUNK) await fill();
    const newline = guessNewline(buf.toString('latin1', 0, Math.min(len, PAPA_FIRST_CHUNK)));
    if (newline === '\r') return { done: false, offset: 0, line: 1, newline };
    const crlf = newline === '\r\n';
    let line = 1;
    let pos = 0;
    const fields: string[] = [];
    let count = 0;
    let newlines = 0;
    let blank = false;

    /** Scans one row at buf[p]; returns where the next row starts, NEED_MORE or GIVE_UP. */
    const scanRow = (p: number): number => {
      const b = buf;
      const end = len;
      const want = sink.want;
      count = 0;
      newlines = 0;
      blank = false;
      for (;;) {
        const decode = want === null || (count < want.length && want[count] === 1);
        let stop: number; // the byte that ends the field (COMMA, LF, or -1 at the end of file)
        let next: number; // where the next field (or row) starts
        if (p < end && b[p] === QUOTE) {
          let j = p + 1;
          let escaped = false;
          for (;;) {
            for (;;) {
              while (j < end && QSTOPS[b[j]!] === 0) j++;
              if (j < end && b[j] === LF) {
                newlines++;
                j++;
              } else break;
            }
            if (j >= end) return eof ? GIVE_UP : NEED_MORE; // never closed: papaparse says so
            if (j + 1 < end && b[j + 1] === QUOTE) {
              escaped = true;
              j += 2;
              continue;
            }
            break;
          }
          // the closing quote at j
          const after = j + 1;
          if (after >= end) {
            if (!eof) return NEED_MORE;
            stop = -1;
            next = after;
          } else if (b[after] === COMMA) {
            stop = COMMA;
            next = after + 1;
          } else if (!crlf && b[after] === LF) {
            stop = LF;
            next = after + 1;
          } else if (crlf && b[after] === CR) {
            if (after + 1 >= end) {
              if (!eof) return NEED_MORE;
              return GIVE_UP;
            }
            if (b[after + 1] !== LF) return GIVE_UP;
            stop = LF;
            next = after + 2;
          } else return GIVE_UP; // text after the closing quote
          if (count === 0 && stop !== COMMA) blank = j === p + 1;
          if (decode) {
            const s = b.toString('utf8', p + 1, j);
            fields[count] = escaped ? s.replaceAll('""', '"') : s;
          } else fields[count] = '';
        } else {
          let j = p;
          let c = 0;
          while (j < end && STOPS[b[j]!] === 0) j++;
          if (j < end) c = b[j]!;
          if (j >= end) {
            if (!eof) return NEED_MORE;
            stop = -1;
            next = j;
          } else if (c === COMMA) {
            stop = COMMA;
            next = j + 1;
          } else if (c === LF) {
            if (crlf) return GIVE_UP; // a bare \n in a \r\n file is data to papaparse
            stop = LF;
            next = j + 1;
          } else if (c === CR) {
            if (!crlf) {
              // a \r in a \n file is data: keep scanning the field past it
              let k = j + 1;
              while (k < end) {
                const d = b[k]!;
                if (d === COMMA || d === LF || d === QUOTE) break;
                k++;
              }
              if (k >= end && !eof) return NEED_MORE;
              if (k < end && b[k] === QUOTE) return GIVE_UP;
              j = k;
              stop = k >= end ? -1 : b[k] === COMMA ? COMMA : LF;
              next = k >= end ? k : k + 1;
            } else {
              if (j + 1 >= end) {
                if (!eof) return NEED_MORE;
                return GIVE_UP;
              }
              if (b[j + 1] !== LF) return GIVE_UP;
              stop = LF;
              next = j + 2;
            }
          } else return GIVE_UP; // a quote inside a bare field
          if (count === 0 && stop !== COMMA) blank = j === p;
          fields[count] = decode ? b.toString('utf8', p, j) : '';
        }
        count++;
        if (stop !== COMMA) return next;
        p = next;
      }
    };

    for (;;) {
      if (signal?.aborted) throw new Error('aborted');
      if (pos >= len) {
        if (eof) return { done: true };
        base += pos;
        len = 0;
        pos = 0;
        await fill();
        continue;
      }
      const next = scanRow(pos);
      if (next === NEED_MORE) {
        // keep the partial row: move it to the front and read on
        buf.copy(buf, 0, pos, len);
        base += pos;
        len -= pos;
        pos = 0;
        await fill();
        continue;
      }
      if (next === GIVE_UP) return { done: false, offset: base + pos, line, newline };
      const at = line;
      line += 1 + newlines;
      pos = next;
      fields.length = count;
      if (!sink.row(fields, count, at, blank)) return { done: true };
    }
  } finally {
    await fh.close();
  }
}
