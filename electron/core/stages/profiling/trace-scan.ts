import { open } from 'node:fs/promises';

/**
 * A byte-level scanner for Chrome traces (trace_view.json: an array of events, or
 * `{"traceEvents": [...]}`), the fast path of streamTrace(). Per event it reads only the keys
 * the analysis and the timeline use (name, ph, cat, pid, tid, ts, dur), straight from the read
 * buffer; every other value is skipped by its brackets and quotes, and `args` is parsed only when
 * asked for (the process names of `M` events). One event object is reused for every event, so
 * nothing is allocated per event but the strings asked for (and those are mostly short).
 *
 * It checks the structure as it goes. On anything it does not expect — a syntax error, a file cut
 * off mid-array, a BOM, `traceEvents` that is not an array — it stops and says how many events it
 * gave; the caller then reads the file with @streamparser/json (the maintained parser) and
 * skips that many, so a damaged file reads and warns exactly as before.
 */

/** The keys read, as the fast path gives them (a reused object: valid only during the call). */
export interface ScannedEvent {
  name?: unknown;
  ph?: unknown;
  cat?: unknown;
  pid?: unknown;
  tid?: unknown;
  ts?: unknown;
  dur?: unknown;
  readonly args?: unknown;
}

const WANTED = ['name', 'ph', 'cat', 'pid', 'tid', 'ts', 'dur', 'args'] as const;
type Key = (typeof WANTED)[number];

const NEED_MORE = -1;
const INTERN_MAX = 64;
const INTERN_SLOTS = 4096;
const BAD = -2;
const QUOTE = 34;
const BACKSLASH = 92;

const isWs = (c: number) => c === 32 || c === 10 || c === 13 || c === 9;
const isHex = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
/** The one-letter escapes: " \\ / b f n r t. */
const ESCAPES = [34, 92, 47, 98, 102, 110, 114, 116];
// what a skipped object or array may have next
const VALUE = 0;
const VALUE_OR_CLOSE = 1;
const KEY = 2;
const KEY_OR_CLOSE = 3;
const COLON = 4;
const COMMA_OR_CLOSE = 5;

/** 10^k for k in 0..22: exact doubles, so m·10^k and m/10^k are correctly rounded (Clinger). */
const POW10 = Array.from({ length: 23 }, (_, k) => Number(`1e${k}`));

export interface TraceScanEnd {
  /** Events given to onEvent. */
  events: number;
  /** false: stopped at something unexpected; read the file with the reference parser. */
  ok: boolean;
}

export async function scanTrace(
  path: string,
  onEvent: (e: ScannedEvent) => void,
  signal?: AbortSignal,
  chunkBytes = 4 << 20,
): Promise<TraceScanEnd> {
  const fh = await open(path, 'r');
  let buf = Buffer.allocUnsafe(chunkBytes);
  let len = 0;
  let base = 0;
  let eof = false;
  let events = 0;
  // the reused event: the keys the analysis reads decoded as they come; ts, tid and args (which
  // the import does not read) kept as byte ranges and decoded only when asked for
  const lazy = { ts: [-1, -1], tid: [-1, -1], args: [-1, -1] } as Record<
    'ts' | 'tid' | 'args',
    [number, number]
  >;
  const ev: ScannedEvent & Record<string, unknown> = {
    name: undefined,
    ph: undefined,
    cat: undefined,
    pid: undefined,
    dur: undefined,
  };
  for (const key of ['ts', 'tid', 'args'] as const)
    Object.defineProperty(ev, key, {
      enumerable: true,
      get() {
        const [from, to] = lazy[key];
        if (from < 0) return undefined;
        // ts and tid are mostly unique per event: decoded, not interned
        return key === 'args'
          ? JSON.parse(buf.toString('utf8', from, to))
          : valueAt(from, to, false);
      },
    });

  const fill = async () => {
    if (len === buf.length) {
      const bigger = Buffer.allocUnsafe(buf.length * 2); // an event longer than the buffer
      buf.copy(bigger, 0, 0, len);
      buf = bigger;
    }
    const { bytesRead } = await fh.read(buf, len, buf.length - len, base + len);
    if (bytesRead === 0) eof = true;
    len += bytesRead;
  };

  const ws = (p: number) => {
    while (p < len && isWs(buf[p]!)) p++;
    return p;
  };

  /** End of the string whose opening quote is at p (the index after its closing quote). */
  const skipString = (p: number): number => {
    const b = buf;
    let j = p + 1;
    for (;;) {
      while (j < len) {
        const c = b[j]!;
        if (c === QUOTE || c === BACKSLASH || c < 32) break;
        j++;
      }
      if (j >= len) return NEED_MORE;
      const c = b[j]!;
      if (c === QUOTE) return j + 1;
      if (c < 32) return BAD; // a raw control character is not JSON
      // an escape: \" \\ \/ \b \f \n \r \t or \u and four hex digits
      if (j + 1 >= len) return NEED_MORE;
      const e = b[j + 1]!;
      if (e === 117) {
        if (j + 6 > len) return NEED_MORE;
        for (let k = j + 2; k < j + 6; k++) if (!isHex(b[k]!)) return BAD;
        j += 6;
      } else if (ESCAPES.includes(e)) j += 2;
      else return BAD;
    }
  };

  /** End of the JSON value at p (any kind), checking its grammar, or NEED_MORE / BAD. */
  const skipValue = (p: number): number => {
    const b = buf;
    if (p >= len) return NEED_MORE;
    const c = b[p]!;
    if (c === QUOTE) return skipString(p);
    if (c !== 123 && c !== 91) return skipScalar(p);
    // an object or array: what may come next, and the brackets still open
    const stack: number[] = [c === 123 ? 125 : 93];
    let expect = c === 123 ? KEY_OR_CLOSE : VALUE_OR_CLOSE;
    let j = p + 1;
    while (stack.length) {
      if (j >= len) return NEED_MORE;
      const d = b[j]!;
      if (isWs(d)) {
        j++;
        continue;
      }
      const value = expect === VALUE || expect === VALUE_OR_CLOSE;
      if (d === QUOTE) {
        if (!value && expect !== KEY && expect !== KEY_OR_CLOSE) return BAD;
        j = skipString(j);
        if (j < 0) return j;
        expect = value ? COMMA_OR_CLOSE : COLON;
      } else if (d === 123 || d === 91) {
        if (!value) return BAD;
        stack.push(d === 123 ? 125 : 93);
        expect = d === 123 ? KEY_OR_CLOSE : VALUE_OR_CLOSE;
        j++;
      } else if (d === 125 || d === 93) {
        const top = stack[stack.length - 1];
        const closes =
          top === d &&
          (expect === COMMA_OR_CLOSE ||
            (expect === KEY_OR_CLOSE && d === 125) ||
            (expect === VALUE_OR_CLOSE && d === 93));
        if (!closes) return BAD;
        stack.pop();
        expect = COMMA_OR_CLOSE;
        j++;
      } else if (d === 58) {
        if (expect !== COLON) return BAD;
        expect = VALUE;
        j++;
      } else if (d === 44) {
        if (expect !== COMMA_OR_CLOSE) return BAD;
        expect = stack[stack.length - 1] === 125 ? KEY : VALUE;
        j++;
      } else {
        if (!value) return BAD;
        const e = skipScalar(j);
        if (e < 0) return e;
        j = e;
        expect = COMMA_OR_CLOSE;
      }
    }
    return j;
  };

  /** A number (its JSON grammar checked) or true / false / null at p. */
  const skipScalar = (p: number): number => {
    const b = buf;
    const c = b[p]!;
    const lit = c === 116 ? 'true' : c === 102 ? 'false' : c === 110 ? 'null' : null;
    if (lit) {
      if (p + lit.length > len) return NEED_MORE;
      for (let k = 1; k < lit.length; k++) if (b[p + k] !== lit.charCodeAt(k)) return BAD;
      return p + lit.length;
    }
    let j = p;
    if (b[j] === 45) j++;
    const digits = (from: number) => {
      let k = from;
      while (k < len && b[k]! >= 48 && b[k]! <= 57) k++;
      return k;
    };
    if (j >= len) return NEED_MORE;
    if (b[j] === 48) j++;
    else if (b[j]! >= 49 && b[j]! <= 57) j = digits(j);
    else return BAD;
    if (j < len && b[j] === 46) {
      const k = digits(j + 1);
      if (k === j + 1) return k >= len ? NEED_MORE : BAD;
      j = k;
    }
    if (j < len && (b[j] === 101 || b[j] === 69)) {
      let k = j + 1;
      if (k < len && (b[k] === 43 || b[k] === 45)) k++;
      const e = digits(k);
      if (e === k) return e >= len ? NEED_MORE : BAD;
      j = e;
    }
    if (j >= len) return NEED_MORE; // a number may go on in the next read
    return j;
  };

  /**
   * The number in buf[p..e): correctly rounded from its digits when they fit the fast case, else
   * Number() of its text; NaN when it is not a JSON number (the reference then decides).
   */
  const numberAt = (p: number, e: number): number => {
    const b = buf;
    let j = p;
    const neg = b[j] === 45;
    if (neg) j++;
    let m = 0;
    let digits = 0;
    let scale = 0;
    const intStart = j;
    while (j < e && b[j]! >= 48 && b[j]! <= 57) {
      m = m * 10 + (b[j]! - 48);
      if (m !== 0) digits++;
      j++;
    }
    if (j === intStart || (b[intStart] === 48 && j - intStart > 1)) return NaN;
    if (j < e && b[j] === 46) {
      j++;
      const fracStart = j;
      while (j < e && b[j]! >= 48 && b[j]! <= 57) {
        m = m * 10 + (b[j]! - 48);
        if (m !== 0) digits++;
        scale++;
        j++;
      }
      if (j === fracStart) return NaN;
    }
    if (j < e) {
      if (b[j] !== 101 && b[j] !== 69) return NaN;
      const text = buf.toString('latin1', p, e);
      return /^-?(0|[1-9]\d*)(\.\d+)?[eE][+-]?\d+$/.test(text) ? Number(text) : NaN;
    }
    if (digits > 15 || scale > 22) return Number(buf.toString('latin1', p, e));
    const v = scale ? m / POW10[scale]! : m;
    return neg ? -v : v;
  };

  /**
   * A string value at p..e (quotes included), decoded; escapes through JSON.parse. Short strings
   * repeat (names, categories, phases): a small table keyed by a hash of the bytes hands out the
   * string decoded before when the bytes are the same, rather than decoding them again.
   */
  const stringAt = (p: number, e: number, intern = true): string => {
    const b = buf;
    const n = e - p - 2;
    let h = n;
    for (let j = p + 1; j < e - 1; j++) {
      const c = b[j]!;
      if (c === BACKSLASH) return JSON.parse(b.toString('utf8', p, e)) as string;
      h = (Math.imul(h, 31) + c) | 0;
    }
    if (n > INTERN_MAX || !intern) return b.toString('utf8', p + 1, e - 1);
    const slot = h & (INTERN_SLOTS - 1);
    const known = internBytes[slot];
    if (known !== undefined && known.length === n) {
      let same = true;
      for (let k = 0; k < n; k++)
        if (known[k] !== b[p + 1 + k]) {
          same = false;
          break;
        }
      if (same) return internStrings[slot]!;
    }
    const str = b.toString('utf8', p + 1, e - 1);
    internBytes[slot] = new Uint8Array(b.subarray(p + 1, e - 1)); // a copy: the buffer is reused
    internStrings[slot] = str;
    return str;
  };
  const internBytes: (Uint8Array | undefined)[] = new Array(INTERN_SLOTS);
  const internStrings: (string | undefined)[] = new Array(INTERN_SLOTS);

  /** The value at vs..ve (checked by skipValue): strings and numbers from the bytes. */
  const valueAt = (vs: number, ve: number, intern = true): unknown => {
    const c = buf[vs]!;
    if (c === QUOTE) return stringAt(vs, ve, intern);
    if (c === 45 || (c >= 48 && c <= 57)) return numberAt(vs, ve);
    return JSON.parse(buf.toString('utf8', vs, ve)); // true/false/null, objects, arrays
  };

  /** The key at p (a string, quotes at p and e-1) as one of WANTED, or null. */
  const keyAt = (p: number, e: number): Key | null => {
    const n = e - p - 2;
    if (n < 2 || n > 4) return null;
    const b = buf;
    const c0 = b[p + 1];
    for (const k of WANTED)
      if (k.length === n && k.charCodeAt(0) === c0) {
        let same = true;
        for (let i = 1; i < n; i++)
          if (b[p + 1 + i] !== k.charCodeAt(i)) {
            same = false;
            break;
          }
        if (same) return k;
      }
    return null;
  };

  /** One event object at p: its end, and the keys read into `ev`; or NEED_MORE / BAD. */
  const readEvent = (p: number): number => {
    ev.name = ev.ph = ev.cat = ev.pid = ev.dur = undefined;
    lazy.ts[0] = lazy.tid[0] = lazy.args[0] = -1;
    let j = ws(p + 1);
    if (j >= len) return NEED_MORE;
    if (buf[j] === 125) return j + 1;
    for (;;) {
      if (j >= len) return NEED_MORE;
      if (buf[j] !== QUOTE) return BAD;
      const ke = skipString(j);
      if (ke < 0) return ke;
      const key = keyAt(j, ke);
      j = ws(ke);
      if (j >= len) return NEED_MORE;
      if (buf[j] !== 58) return BAD;
      j = ws(j + 1);
      const vs = j;
      const ve = skipValue(vs);
      if (ve < 0) return ve;
      if (key === 'args' || key === 'ts' || key === 'tid') {
        lazy[key][0] = vs;
        lazy[key][1] = ve;
      } else if (key !== null) ev[key] = valueAt(vs, ve);
      j = ws(ve);
      if (j >= len) return NEED_MORE;
      if (buf[j] === 44) {
        j = ws(j + 1);
        continue;
      }
      if (buf[j] === 125) return j + 1;
      return BAD;
    }
  };

  // where the scan is: before the root, in a root object's keys, in the events array, after it
  type State = 'root' | 'key' | 'afterValue' | 'arrayStart' | 'element' | 'afterElement' | 'end';
  let state: State = 'root';
  let rootIsObject = false;
  let pos = 0;
  try {
    await fill();
    if (buf[0] === 0xef) return { events, ok: false }; // a BOM: the reference decides
    for (;;) {
      if (signal?.aborted) throw new Error('aborted');
      let p = ws(pos);
      let next = NEED_MORE;
      let to: State = state;
      let emit = false;
      if (p < len) {
        const c = buf[p]!;
        try {
          switch (state) {
            case 'root':
              if (c === 91) [next, to] = [p + 1, 'arrayStart'];
              else if (c === 123) {
                rootIsObject = true;
                [next, to] = [ws(p + 1) < len && buf[ws(p + 1)] === 125 ? BAD : p + 1, 'key'];
              } else next = BAD;
              break;
            case 'key': {
              if (c !== QUOTE) {
                next = BAD;
                break;
              }
              const ke = skipString(p);
              if (ke < 0) {
                next = ke;
                break;
              }
              const isEvents = stringAt(p, ke) === 'traceEvents';
              let j = ws(ke);
              if (j >= len) break;
              if (buf[j] !== 58) {
                next = BAD;
                break;
              }
              j = ws(j + 1);
              if (j >= len) break;
              if (isEvents) {
                // the events must be an array here; anything else is left to the reference
                [next, to] = buf[j] === 91 ? [j + 1, 'arrayStart'] : [BAD, state];
              } else [next, to] = [skipValue(j), 'afterValue'];
              break;
            }
            case 'afterValue':
              if (c === 44) [next, to] = [p + 1, 'key'];
              else if (c === 125) [next, to] = [p + 1, 'end'];
              else next = BAD;
              break;
            case 'arrayStart':
              if (c === 93) [next, to] = [p + 1, rootIsObject ? 'afterValue' : 'end'];
              else to = 'element';
              if (c !== 93) next = p; // the element is read by the next turn
              break;
            case 'element':
              if (c === 123) {
                next = readEvent(p);
                emit = next >= 0;
              } else next = skipValue(p);
              to = 'afterElement';
              break;
            case 'afterElement':
              if (c === 44) [next, to] = [p + 1, 'element'];
              else if (c === 93) [next, to] = [p + 1, rootIsObject ? 'afterValue' : 'end'];
              else next = BAD;
              break;
            case 'end':
              next = BAD; // text after the root
              break;
          }
        } catch {
          next = BAD; // a value JSON.parse refuses (the reference then says what)
        }
      } else if (eof) return { events, ok: state === 'end' };
      if (emit) {
        // outside the try: the reader's own errors are not syntax errors
        events++;
        onEvent(ev);
      }
      if (next === BAD) return { events, ok: false };
      if (next === NEED_MORE) {
        if (eof) return { events, ok: false }; // cut off
        // keep what is not read yet (from the unit's start) and read on
        p = pos;
        buf.copy(buf, 0, p, len);
        base += p;
        len -= p;
        pos = 0;
        await fill();
        continue;
      }
      pos = next;
      state = to;
    }
  } finally {
    await fh.close();
  }
}
