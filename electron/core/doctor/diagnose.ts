import { createReadStream, lstatSync, readdirSync, type Stats, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { Readable } from 'node:stream';
import type {
  DoctorMatch,
  DoctorNotice,
  DoctorResult,
  DoctorUnmatched,
  Language,
} from '../../../shared/api';
import { AmwError } from '../../../shared/errors';
import { msg } from '../../../shared/api/text';
import { loadDoctorRules, type DoctorRule } from './rules';
import { fsErrorText } from '../fs-error';

/** What a line keeps around a hit; longer lines are cut to this window. */
export const MAX_LINE = 4096;
/** A "line" with no newline after this many bytes is scanned as it is and the rest continues. */
const MAX_CARRY = 1024 * 1024;
export const MAX_MATCHES_PER_RULE = 20;
export const MAX_UNMATCHED = 50;
/** Error-looking lines this close before a match are part of that failure, not unknown. */
const LEAD_LINES = 3;
/** …and this many after it (tracebacks, "Solution:" lines). */
const TRAIL_LINES = 12;
const MAX_FILES = 2000;
const MAX_DEPTH = 8;

/** Lines that look like errors (case-sensitive on purpose: `error_handler` is not one). */
const ERRORISH =
  /\b(?:ERROR|Error|error|FATAL|Fatal|CRITICAL|FAILED|Failed|failed|Segmentation fault|core dumped)\b|\b[A-Z][A-Za-z]{0,40}(?:Error|Exception)\b|\bE[A-Z0-9]\d{4}\b|\bERR\d{5}\b/;
const PY_EXCEPTION =
  /^\s*(?:\[rank\d+\]:\s*)?(?:[\w.]+\.)?[A-Z]\w{0,60}(?:Error|Exception|Interrupt)\b/;
/**
 * Lines after which Python quotes a source line: a traceback frame and a warning's location. The
 * quoted `raise X("…")` / `warnings.warn("…")` is the program's code, not a second failure.
 */
const QUOTES_SOURCE_NEXT =
  /^\s*File "[^"\n]{1,1000}", line \d+|^\S[^\n]{0,1000}\.py:\d+: [A-Z]\w{0,40}Warning: /;
/** Headers that say an error follows, not what it is. */
const NOT_AN_ERROR_ITSELF = /^\s*(?:Trace[Bb]ack \(most recent call last\):|\[rank\d+\]:\s*)$/;
// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;?]{0,32}[A-Za-z]/g;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f]/g;

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export interface RawMatch {
  rule: DoctorRule;
  line: number;
  file?: string;
  text: string;
}

/** The language-free outcome; `localise` adds cause and fix in a language. */
export interface Diagnosis {
  matches: RawMatch[];
  unmatched: DoctorUnmatched[];
  notices: DoctorNotice[];
  stats: DoctorResult['stats'];
}

/**
 * A streaming diagnoser: feed it bytes in any chunks, get every match in order. Memory is bounded
 * by the chunk plus one capped line; a chunk is first searched with one prefilter regex (rule
 * keywords and error-looking words, all literals), so lines nobody cares about are never split
 * or decoded twice.
 */
export class Diagnoser {
  private readonly trigger: RegExp;
  private carry: Buffer = Buffer.alloc(0);
  private lineNo = 1;
  private file: string | undefined;
  private lastMatchLine = -Infinity;
  private readonly perRule = new Map<string, number>();
  private readonly pending: DoctorUnmatched[] = [];
  private readonly result: Diagnosis;
  private readonly started = Date.now();

  constructor(private readonly rules: DoctorRule[] = loadDoctorRules()) {
    const words = [...new Set(rules.flatMap((r) => r.keywords))].map(escape);
    const errorWords = ['error', 'fatal', 'critical', 'failed', 'exception', 'segmentation fault'];
    this.trigger = new RegExp(
      [...words, ...errorWords, '\\bE[A-Z0-9]\\d{4}\\b', '\\bERR\\d{5}\\b'].join('|'),
      'gi',
    );
    this.result = {
      matches: [],
      unmatched: [],
      notices: [],
      stats: {
        files: 0,
        lines: 0,
        bytes: 0,
        binary: false,
        longLines: 0,
        suppressed: [],
        unmatchedSuppressed: 0,
        elapsedMs: 0,
      },
    };
  }

  /** Starts a new file (a plog folder): line numbers restart, matches carry its name. */
  startFile(name: string | undefined): void {
    this.flushCarry();
    this.flushPending(Infinity);
    this.file = name;
    this.lineNo = 1;
    this.lastMatchLine = -Infinity;
    this.result.stats.files++;
  }

  feed(chunk: Buffer): void {
    this.result.stats.bytes += chunk.length;
    const buf = this.carry.length ? Buffer.concat([this.carry, chunk]) : chunk;
    const lastNl = buf.lastIndexOf(10);
    if (lastNl < 0) {
      if (buf.length > MAX_CARRY) {
        // one enormous line: scan what we have; its continuation keeps the same line number
        this.result.stats.longLines++;
        this.scan(buf);
        this.carry = Buffer.alloc(0);
      } else this.carry = Buffer.from(buf);
      return;
    }
    this.scan(buf.subarray(0, lastNl + 1));
    this.carry = Buffer.from(buf.subarray(lastNl + 1));
  }

  end(): Diagnosis {
    this.flushCarry();
    this.flushPending(Infinity);
    const r = this.result;
    r.stats.suppressed = [...this.perRule]
      .filter(([, n]) => n > MAX_MATCHES_PER_RULE)
      .map(([rule, n]) => ({ rule, count: n - MAX_MATCHES_PER_RULE }));
    for (const s of r.stats.suppressed)
      r.notices.push({ key: 'doctor.notice.suppressed', params: { rule: s.rule, count: s.count } });
    if (r.stats.unmatchedSuppressed)
      r.notices.push({
        key: 'doctor.notice.unmatchedSuppressed',
        params: { count: r.stats.unmatchedSuppressed },
      });
    if (r.stats.binary) r.notices.push({ key: 'doctor.notice.binary', params: {} });
    if (r.stats.longLines)
      r.notices.push({ key: 'doctor.notice.longLines', params: { count: r.stats.longLines } });
    r.stats.elapsedMs = Date.now() - this.started;
    return r;
  }

  private flushCarry() {
    if (this.carry.length) {
      this.scan(this.carry);
      this.carry = Buffer.alloc(0);
      this.lineNo++;
      this.result.stats.lines++;
    }
  }

  private scan(bytes: Buffer) {
    if (!this.result.stats.binary && bytes.indexOf(0) >= 0) this.result.stats.binary = true;
    const text = bytes.toString('utf8');
    const re = this.trigger;
    re.lastIndex = 0;
    let pos = 0;
    for (let m = re.exec(text); m; m = re.exec(text)) {
      const hit = m.index;
      // advance the line counter to the hit
      for (let i = text.indexOf('\n', pos); i >= 0 && i < hit; i = text.indexOf('\n', i + 1)) {
        this.lineNo++;
        this.result.stats.lines++;
        pos = i + 1;
      }
      const start = text.lastIndexOf('\n', hit) + 1;
      let end = text.indexOf('\n', hit);
      if (end < 0) end = text.length;
      let from = start;
      let to = end;
      if (end - start > MAX_LINE) {
        this.result.stats.longLines++;
        from = Math.max(start, hit - MAX_LINE / 2);
        to = Math.min(end, from + MAX_LINE);
      }
      if (!this.quotedSource(text, start)) this.line(text.slice(from, to));
      re.lastIndex = end + 1;
      if (end >= text.length) break;
    }
    for (let i = text.indexOf('\n', pos); i >= 0; i = text.indexOf('\n', i + 1)) {
      this.lineNo++;
      this.result.stats.lines++;
    }
  }

  /** Whether the line starting at `start` is source Python quotes after the line before it. */
  private quotedSource(text: string, start: number): boolean {
    if (start < 2) return false;
    const prevStart = text.lastIndexOf('\n', start - 2) + 1;
    if (start - prevStart > MAX_LINE) return false;
    return QUOTES_SOURCE_NEXT.test(text.slice(prevStart, start - 1));
  }

  private line(raw: string) {
    const text = raw.replace(ANSI, '').replace(CONTROL, '\ufffd').replace(/\r$/, '');
    const lower = text.toLowerCase();
    const hits = this.rules.filter(
      (r) =>
        r.lowerKeywords.some((k) => lower.includes(k)) &&
        (r.compiled.length === 0 || r.compiled.some((c) => c.test(text))),
    );
    const specific = hits.filter((r) => !r.generic);
    const chosen = specific.length ? specific : hits;
    const line = this.lineNo;
    if (chosen.length) {
      this.claimPending(line);
      this.lastMatchLine = line;
      for (const rule of chosen) {
        const n = (this.perRule.get(rule.id) ?? 0) + 1;
        this.perRule.set(rule.id, n);
        if (n <= MAX_MATCHES_PER_RULE)
          this.result.matches.push({ rule, line, file: this.file, text: text.trim() });
      }
      return;
    }
    if (!ERRORISH.test(text) || NOT_AN_ERROR_ITSELF.test(text)) return;
    // the lines after a known failure (CANN TraceBack, "launch failed for …") belong to it; a
    // Python exception is a failure of its own
    if (line - this.lastMatchLine <= TRAIL_LINES && !PY_EXCEPTION.test(text)) return;
    this.pending.push({ line, file: this.file, text: text.trim() });
    this.flushPending(line - LEAD_LINES);
  }

  /** Pending unknown lines before `before` can no longer be claimed by a later match. */
  private flushPending(before: number) {
    while (this.pending.length && this.pending[0]!.line < before) this.emitUnmatched();
  }

  /** A match at `line` claims the error-looking lines just before it: they are its lead-in. */
  private claimPending(line: number) {
    while (this.pending.length && this.pending[this.pending.length - 1]!.line >= line - LEAD_LINES)
      this.pending.pop();
    this.flushPending(Infinity);
  }

  private emitUnmatched() {
    const u = this.pending.shift()!;
    if (this.result.unmatched.length < MAX_UNMATCHED) this.result.unmatched.push(u);
    else this.result.stats.unmatchedSuppressed++;
  }
}

/** Adds title, cause, fix and the rest of each rule, in one language. */
export function localise(d: Diagnosis, lang: Language): DoctorResult {
  return {
    matches: d.matches.map((m): DoctorMatch => ({
      rule: m.rule.id,
      line: m.line,
      ...(m.file === undefined ? {} : { file: m.file }),
      text: m.text,
      category: m.rule.category,
      severity: m.rule.severity,
      title: m.rule.title[lang],
      cause: m.rule.cause[lang],
      fix: m.rule.fix[lang],
      proof: m.rule.proof,
      links: m.rule.links,
    })),
    unmatched: d.unmatched.map((u) => (u.file === undefined ? { line: u.line, text: u.text } : u)),
    notices: d.notices,
    stats: d.stats,
  };
}

/**
 * The pure entry point for other engine parts (a failed stage's output): the text in, every match
 * in order out. Synchronous; a failed stage's output is already in memory and capped.
 */
export function diagnoseRaw(text: string): Diagnosis {
  const d = new Diagnoser();
  d.startFile(undefined);
  d.feed(Buffer.from(text, 'utf8'));
  return d.end();
}

export function diagnoseText(text: string, lang: Language = 'en'): DoctorResult {
  const d = new Diagnoser();
  d.startFile(undefined);
  d.feed(Buffer.from(text, 'utf8'));
  return localise(d.end(), lang);
}

/** Streams a readable (a file, stdin) through a diagnoser; AbortSignal stops it. */
export async function diagnoseStream(
  input: Readable,
  d: Diagnoser,
  signal?: AbortSignal,
): Promise<void> {
  for await (const chunk of input) {
    if (signal?.aborted) {
      input.destroy();
      throw new AmwError('CANCELLED', 'The diagnosis was cancelled.');
    }
    d.feed(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  }
}

const LOG_NAME = /\.(?:log|txt|out|err)(?:\.\d+)?$|^(?:plog|device|run)-.*\d/i;

/** Log files under a folder (a CANN plog tree), symlinks not followed, bounded in depth and count. */
export function findLogs(dir: string): { files: string[]; truncated: boolean } {
  const out: string[] = [];
  let truncated = false;
  const walk = (d: string, depth: number) => {
    if (depth > MAX_DEPTH) return;
    let names: string[];
    try {
      names = readdirSync(d).sort();
    } catch {
      return;
    }
    for (const name of names) {
      if (out.length >= MAX_FILES) {
        truncated = true;
        return;
      }
      const p = join(d, name);
      let st: Stats;
      try {
        st = lstatSync(p);
      } catch {
        continue;
      }
      if (st.isDirectory()) walk(p, depth + 1);
      else if (st.isFile() && LOG_NAME.test(name)) out.push(p);
    }
  };
  walk(dir, 0);
  return { files: out, truncated };
}

/** A file, a folder of logs (plog), or `-` for stdin. */
export async function diagnosePath(
  path: string,
  lang: Language,
  opts: { stdin?: Readable; signal?: AbortSignal } = {},
): Promise<DoctorResult> {
  const d = new Diagnoser();
  if (path === '-') {
    d.startFile(undefined);
    await diagnoseStream(opts.stdin ?? process.stdin, d, opts.signal);
    return localise(d.end(), lang);
  }
  let st: Stats;
  try {
    st = statSync(path);
  } catch (err) {
    throw new AmwError(
      'NOT_FOUND',
      msg('errors.text.cannotRead', { path, error: fsErrorText(err) }),
      { path },
    );
  }
  if (!st.isDirectory()) {
    if (!st.isFile())
      throw new AmwError('VALIDATION', msg('errors.text.notFileOrFolder', { path }), { path });
    d.startFile(undefined);
    await diagnoseStream(createReadStream(path, { highWaterMark: 1024 * 1024 }), d, opts.signal);
    return localise(d.end(), lang);
  }
  const { files, truncated } = findLogs(path);
  for (const f of files) {
    d.startFile(relative(path, f));
    try {
      await diagnoseStream(createReadStream(f, { highWaterMark: 1024 * 1024 }), d, opts.signal);
    } catch (err) {
      if (err instanceof AmwError) throw err;
      // an unreadable file in a plog tree (permissions, vanished) is skipped, not fatal
    }
  }
  const result = localise(d.end(), lang);
  if (!files.length) result.notices.unshift({ key: 'doctor.notice.noLogs', params: { path } });
  if (truncated)
    result.notices.push({ key: 'doctor.notice.tooManyFiles', params: { count: MAX_FILES } });
  return result;
}
