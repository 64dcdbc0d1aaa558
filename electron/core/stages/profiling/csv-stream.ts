import { createReadStream, statSync } from 'node:fs';
import Papa from 'papaparse';
import type { ProfileWarning } from '../../../../shared/stages/profiling/api';
import { msg } from '../../../../shared/api/text';
import { scanCsv, type ScanSink } from './csv-scan';

/**
 * The profiler's CSV files, streamed row by row (RFC 4180: quoted fields with commas, `"""…"""`
 * shapes, embedded CRLF). Read by the byte scanner of csv-scan.ts, which decodes only the
 * columns asked for (2 GB kernel_details.csv: 201.7 MB/s of CPU time, 71 MB peak RSS; see
 * docs/profiling-performance.md), and by papaparse from the first row it does not understand on
 * (the reference: `parser: 'reference'` reads with papaparse alone). Papaparse was chosen by
 * measurement on a generated 200 MB
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
  /**
   * The row's fields (its length is the row's field count); only the columns the header callback
   * asked for are decoded, the others read as ''. Reused: valid only during the call.
   */
  fields: string[];
}

export interface CsvRead {
  header: string[];
  rows: number;
  bytes: number;
}

export const m = (key: string, params?: Parameters<typeof msg>[1]) =>
  msg(`stage-profiling:${key}`, params);

/** Which parser reads: the byte scanner with papaparse after anything it does not know, or papaparse alone (the reference). */
export type ParserChoice = 'fast' | 'reference';

/**
 * Streams `path`, calling `onHeader` once then `onRow` for each row. `onHeader` returns false to
 * skip the file (an unknown column set), true to read every column, or the columns it reads (the
 * others then read as '': a kernel table has 46 columns, the analysis needs 5). Warnings go to
 * `warn` with the file's name (`label`) and line. `row.fields` is valid only during the call.
 */
export async function streamCsv(
  path: string,
  label: string,
  warn: (w: ProfileWarning) => void,
  onHeader: (header: string[]) => boolean | readonly number[],
  onRow: (row: CsvRow) => void,
  signal?: AbortSignal,
  parser: ParserChoice = 'fast',
): Promise<CsvRead> {
  const bytes = statSync(path).size;
  if (bytes === 0) {
    warn({ file: label, line: null, message: m('warn.empty') });
    return { header: [], rows: 0, bytes };
  }
  let header: string[] | null = null;
  let rows = 0;
  let ragged = 0;
  let skip = false;
  const sink: ScanSink & { error(line: number, error: string): void } = {
    want: null,
    row(fields, count, at, blank) {
      if (blank) return true; // a blank line, or the file's end
      if (!header) {
        header = fields.map((h, i) => (i === 0 ? h.replace(/^\uFEFF/, '') : h).trim());
        const cols = onHeader(header);
        if (cols === false) {
          skip = true;
          return false;
        }
        if (cols !== true) {
          const want = new Uint8Array(header.length + 1);
          for (const c of cols) if (c >= 0 && c < want.length) want[c] = 1;
          sink.want = want;
        }
        return true;
      }
      if (count !== header.length) {
        ragged++;
        if (ragged <= 20)
          warn({
            file: label,
            line: at,
            message: m('warn.ragged', { fields: count, header: header.length }),
          });
      }
      rows++;
      onRow({ line: at, fields });
      return true;
    },
    error(line, error) {
      warn({ file: label, line, message: m('warn.csvError', { error }) });
    },
  };
  let from: { offset: number; line: number; newline?: '\n' | '\r\n' | '\r' } = {
    offset: 0,
    line: 1,
  };
  if (parser === 'fast') {
    const end = await scanCsv(path, sink, signal);
    if (end.done) from = { offset: bytes, line: 0 };
    else from = end;
  }
  if (from.offset < bytes && !skip) await papaRows(path, from, sink, signal);
  if (ragged > 20)
    warn({ file: label, line: null, message: m('warn.raggedMore', { count: ragged - 20 }) });
  return { header: header ?? [], rows, bytes };
}

/**
 * papaparse over the file from `from.offset` (the whole file, or the rest after the scanner met
 * what it does not read): the reference parser, its errors reported with their line.
 */
function papaRows(
  path: string,
  from: { offset: number; line: number; newline?: '\n' | '\r\n' | '\r' },
  sink: ScanSink & { error(line: number, error: string): void },
  signal?: AbortSignal,
): Promise<void> {
  return new Promise((resolve, reject) => {
    let line = from.line;
    let stopped = false;
    // 64 KB reads (the default): measured against 256 KB and 1 MB, which papaparse takes slower
    const stream = createReadStream(path, { start: from.offset });
    const onAbort = () => stream.destroy(new Error('aborted'));
    signal?.addEventListener('abort', onAbort, { once: true });
    Papa.parse(stream as unknown as File, {
      header: false,
      skipEmptyLines: false,
      delimiter: ',', // always a comma; guessing reads the start twice and can fail on tiny files
      // a rest read after the scanner keeps the line ending guessed on the file's start
      ...(from.newline ? { newline: from.newline } : {}),
      // rows come a chunk at a time (~1.35x the throughput of a callback per row)
      chunk(results: Papa.ParseResult<string[]>, p: Papa.Parser) {
        const errs = new Map<number, string>();
        for (const e of results.errors) if (e.row !== undefined) errs.set(e.row, e.message);
        const data = results.data;
        for (let r = 0; r < data.length; r++) {
          if (stopped) return;
          const fields = data[r]!;
          const at = line;
          // a field with an embedded newline moves the next row's line on
          let extra = 0;
          for (const f of fields)
            for (let i = f.indexOf('\n'); i >= 0; i = f.indexOf('\n', i + 1)) extra++;
          line += 1 + extra;
          const e = errs.get(r);
          if (e) sink.error(at, e);
          if (!sink.row(fields, fields.length, at, fields.length === 1 && fields[0] === '')) {
            stopped = true;
            p.abort();
            return;
          }
        }
      },
      complete() {
        signal?.removeEventListener('abort', onAbort);
        resolve();
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
