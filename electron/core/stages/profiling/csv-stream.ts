import { createReadStream, statSync } from 'node:fs';
import Papa from 'papaparse';
import type { ProfileWarning } from '../../../../shared/stages/profiling/api';
import { msg } from '../../../../shared/api/text';

/**
 * The profiler's CSV files, streamed row by row (RFC 4180: quoted fields with commas, `"""…"""`
 * shapes, embedded CRLF). Built on papaparse, chosen by measurement on a generated 200 MB
 * kernel_details.csv (46 columns, quoted shapes, trailing TABs; bench/profiling-candidates.ts,
 * 2 cores shared with other work): papaparse 61 MB/s at 85 MB peak RSS, csv-parse 26 MB/s at
 * 61 MB; a second run under heavier load: papaparse 38.9 (row callback) / 53.1 MB/s (chunk
 * callback, used here), csv-parse 11.7 MB/s.
 *
 * Rows are keyed by header name, never by position of a known layout; a row with more or fewer
 * fields than the header is kept (read by position) and reported with its line.
 */
export interface CsvRow {
  /** 1-based line where the row starts. */
  line: number;
  fields: string[];
}

export interface CsvRead {
  header: string[];
  rows: number;
  bytes: number;
}

export const m = (key: string, params?: Parameters<typeof msg>[1]) =>
  msg(`stage-profiling:${key}`, params);

/**
 * Streams `path`, calling `onHeader` once (return false to skip the file: an unknown column set)
 * then `onRow` for each row. Warnings go to `warn` with the file's name (`label`) and line.
 */
export function streamCsv(
  path: string,
  label: string,
  warn: (w: ProfileWarning) => void,
  onHeader: (header: string[]) => boolean,
  onRow: (row: CsvRow) => void,
  signal?: AbortSignal,
): Promise<CsvRead> {
  const bytes = statSync(path).size;
  if (bytes === 0) {
    warn({ file: label, line: null, message: m('warn.empty') });
    return Promise.resolve({ header: [], rows: 0, bytes });
  }
  return new Promise((resolve, reject) => {
    let header: string[] | null = null;
    let line = 1;
    let rows = 0;
    let skip = false;
    let ragged = 0;
    // 64 KB reads (the default): measured against 256 KB and 1 MB, which papaparse takes slower
    const stream = createReadStream(path);
    const onAbort = () => stream.destroy(new Error('aborted'));
    signal?.addEventListener('abort', onAbort, { once: true });
    Papa.parse(stream as unknown as File, {
      header: false,
      skipEmptyLines: false,
      delimiter: ',', // always a comma; guessing reads the start twice and can fail on tiny files
      // rows come a chunk at a time (~1.35x the throughput of a callback per row)
      chunk(results: Papa.ParseResult<string[]>, parser: Papa.Parser) {
        const errs = new Map<number, string>();
        for (const e of results.errors) if (e.row !== undefined) errs.set(e.row, e.message);
        const data = results.data;
        for (let r = 0; r < data.length; r++) {
          if (skip) return;
          const fields = data[r]!;
          const at = line;
          // a field with an embedded newline moves the next row's line on
          let extra = 0;
          for (const f of fields)
            for (let i = f.indexOf('\n'); i >= 0; i = f.indexOf('\n', i + 1)) extra++;
          line += 1 + extra;
          const e = errs.get(r);
          if (e) warn({ file: label, line: at, message: m('warn.csvError', { error: e }) });
          if (fields.length === 1 && fields[0] === '') continue; // blank line, or the file's end
          if (!header) {
            header = fields.map((h, i) => (i === 0 ? h.replace(/^\uFEFF/, '') : h).trim());
            if (!onHeader(header)) {
              skip = true;
              parser.abort();
              return;
            }
            continue;
          }
          if (fields.length !== header.length) {
            ragged++;
            if (ragged <= 20)
              warn({
                file: label,
                line: at,
                message: m('warn.ragged', { fields: fields.length, header: header.length }),
              });
          }
          rows++;
          onRow({ line: at, fields });
        }
      },
      complete() {
        signal?.removeEventListener('abort', onAbort);
        if (ragged > 20)
          warn({ file: label, line: null, message: m('warn.raggedMore', { count: ragged - 20 }) });
        resolve({ header: header ?? [], rows, bytes });
      },
      error(err: Error) {
        signal?.removeEventListener('abort', onAbort);
        reject(err);
      },
    });
  });
}

/** A number as the profiler writes it: trailing TAB, `N/A`, empty → null. */
export function num(s: string | undefined): number | null {
  if (s === undefined) return null;
  const v = parseFloat(s);
  return Number.isFinite(v) ? v : null;
}

/** The index of the first header present (names differ by version: Block Dim / Block Num …). */
export function col(header: string[], ...names: string[]): number {
  for (const n of names) {
    const i = header.indexOf(n);
    if (i >= 0) return i;
  }
  return -1;
}
