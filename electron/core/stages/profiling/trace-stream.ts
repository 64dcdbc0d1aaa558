import { createReadStream, openSync, readSync, closeSync, statSync } from 'node:fs';
import { JSONParser } from '@streamparser/json';
import type { ProfileWarning } from '../../../../shared/stages/profiling/api';
import { m, type ParserChoice } from './csv-stream';
import { scanTrace } from './trace-scan';

/**
 * A Chrome trace (trace_view.json, msprof_*.json: an array of events; torch.profiler's export:
 * `{"traceEvents": [...]}`), streamed one event at a time. Read by the byte scanner of
 * trace-scan.ts (only the keys used; one reused event object, so an event is valid only during
 * the call; 1 GB: 193.9 MB/s of CPU time, 74 MB peak RSS), with @streamparser/json as the
 * reference for anything the scanner does not expect (`parser: 'reference'`: it alone). That
 * parser was chosen by measurement on a generated 100 MB trace_view.json
 * (bench/profiling-candidates.ts, 2 shared cores): @streamparser/json 10.4 MB/s at 124 MB peak
 * RSS, stream-json 9.6 MB/s at 122 MB.
 *
 * A file cut off mid-array (a run killed while writing) keeps every event read before the cut and
 * gives a warning with the line where it stopped.
 */
export interface TraceEvent {
  name?: string;
  ph?: string;
  pid?: number | string;
  tid?: number | string;
  ts?: number | string;
  dur?: number;
  cat?: string;
  args?: Record<string, unknown>;
}

function firstByte(path: string): string {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(256);
    const n = readSync(fd, buf, 0, 256, 0);
    return (
      buf
        .subarray(0, n)
        .toString('utf8')
        .replace(/^\uFEFF/, '')
        .trimStart()[0] ?? ''
    );
  } finally {
    closeSync(fd);
  }
}

export async function streamTrace(
  path: string,
  label: string,
  warn: (w: ProfileWarning) => void,
  onEvent: (e: TraceEvent) => void,
  signal?: AbortSignal,
  parser: ParserChoice = 'fast',
): Promise<{ events: number; bytes: number }> {
  const bytes = statSync(path).size;
  if (bytes === 0) {
    warn({ file: label, line: null, message: m('warn.empty') });
    return { events: 0, bytes };
  }
  const root = firstByte(path);
  if (root !== '[' && root !== '{') {
    warn({ file: label, line: 1, message: m('warn.notTrace') });
    return { events: 0, bytes };
  }
  // the scanner first; where it stops short, the reference reads the file and skips what it gave
  let skip = 0;
  if (parser === 'fast') {
    const r = await scanTrace(path, onEvent as (e: unknown) => void, signal);
    if (r.ok) return { events: r.events, bytes };
    skip = r.events;
  }
  let events = 0;
  let line = 1;
  let failed: Error | null = null;
  const json = new JSONParser({
    paths: [root === '[' ? '$.*' : '$.traceEvents.*'],
    keepStack: false,
  });
  json.onValue = ({ value }) => {
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      if (events++ >= skip) onEvent(value as TraceEvent);
    }
  };
  json.onError = (err) => {
    failed ??= err;
  };
  const stream = createReadStream(path);
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      if (signal?.aborted) {
        stream.destroy();
        throw new Error('aborted');
      }
      if (failed || json.isEnded) break;
      try {
        json.write(chunk);
      } catch (err) {
        failed ??= err as Error;
        break;
      }
      // lines so far, for where a cut or a syntax error is
      for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) line++;
    }
    if (!failed && !json.isEnded) {
      try {
        json.end();
      } catch (err) {
        failed = err as Error;
      }
    }
  } finally {
    stream.destroy();
  }
  if (failed || !json.isEnded)
    warn({
      file: label,
      line,
      message: m('warn.truncated', {
        events,
        error: (failed as Error | null)?.message.slice(0, 200) ?? 'unexpected end',
      }),
    });
  return { events, bytes };
}
