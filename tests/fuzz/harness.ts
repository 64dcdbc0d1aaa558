/**
 * Fuzz harness: each parser runs in a worker thread with a heap limit; every input gets a
 * deadline, after which the worker is terminated and the input reported as a hang. Inputs are
 * real fixtures mutated line- and byte-wise, plus generated text.
 */
import { buildSync } from 'esbuild';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import fc from 'fast-check';

export const ROOT = join(__dirname, '..', '..');

/**
 * The file a `Match exec` in a generated config would create: unique to this run, so only a
 * command run by the code under test can make it appear.
 */
export const MARKER = join(mkdtempSync(join(tmpdir(), 'amw-fuzz-marker-')), 'pwned');
export const read = (...p: string[]) => readFileSync(join(ROOT, ...p), 'utf8');

/** Per-input deadline: generous (two shared cores); a real parse of a fixture takes < 5 ms. */
export const DEADLINE_MS = Number(process.env.AMW_FUZZ_DEADLINE_MS ?? 3000);
/** Worker heap: an input of at most ~1 MB must never need more than this. */
const HEAP_MB = 256;

/** Seconds each target gets: AMW_FUZZ_SECONDS in total (npm run fuzz), else a short budget. */
export function budgetMs(targets: number): number {
  const total = Number(process.env.AMW_FUZZ_SECONDS ?? 0);
  return total > 0 ? (total * 1000) / targets : 1500;
}

export interface Outcome {
  kind: 'ok' | 'error' | 'hang' | 'memory';
  ms: number;
  json?: string;
  warnings?: string[];
  refused?: string | null;
  error?: string;
}

let bundle: { dir: string; file: string } | null = null;
function workerBundle(): string {
  if (bundle) return bundle.file;
  // inside the package, so the bundle's bare imports (ssh-config, zod…) resolve from node_modules
  const cache = join(ROOT, 'node_modules', '.cache');
  mkdirSync(cache, { recursive: true });
  const dir = mkdtempSync(join(cache, 'amw-fuzz-'));
  const file = join(dir, 'targets.mjs');
  buildSync({
    entryPoints: [join(__dirname, 'targets.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile: file,
    packages: 'external',
    logLevel: 'error',
    banner: {
      js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
    },
  });
  bundle = { dir, file };
  return file;
}

/** One worker per target, replaced whenever an input hangs or exhausts its heap. */
export class FuzzWorker {
  private worker: Worker | null = null;
  private seq = 0;
  constructor(
    private readonly target: string,
    private readonly scratch: string,
  ) {}

  private spawn(): Worker {
    const w = new Worker(workerBundle(), {
      resourceLimits: { maxOldGenerationSizeMb: HEAP_MB },
      env: { ...process.env, HOME: this.scratch },
      stdout: true,
      stderr: true,
    });
    w.unref();
    this.worker = w;
    return w;
  }

  run(input: string): Promise<Outcome> {
    const w = this.worker ?? this.spawn();
    const id = ++this.seq;
    const started = performance.now();
    return new Promise<Outcome>((resolve) => {
      const done = (o: Outcome) => {
        clearTimeout(timer);
        w.off('message', onMessage);
        w.off('error', onError);
        resolve(o);
      };
      const kill = () => {
        void w.terminate();
        if (this.worker === w) this.worker = null;
      };
      const timer = setTimeout(() => {
        kill();
        done({ kind: 'hang', ms: performance.now() - started });
      }, DEADLINE_MS);
      const onMessage = (m: { id: number; ok: boolean } & Outcome) => {
        if (m.id !== id) return;
        if (m.ok)
          done({ kind: 'ok', ms: m.ms, json: m.json, warnings: m.warnings, refused: m.refused });
        else done({ kind: 'error', ms: m.ms, error: m.error });
      };
      const onError = (err: Error & { code?: string }) => {
        kill();
        done({
          kind: err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'memory' : 'error',
          ms: performance.now() - started,
          error: String(err),
        });
      };
      w.on('message', onMessage);
      w.on('error', onError);
      w.postMessage({ id, target: this.target, input, scratch: join(this.scratch, 'config') });
    });
  }

  async close(): Promise<void> {
    await this.worker?.terminate();
    this.worker = null;
  }
}

export function cleanupBundle(): void {
  rmSync(dirname(MARKER), { recursive: true, force: true });
  if (bundle) rmSync(bundle.dir, { recursive: true, force: true });
  bundle = null;
}

// ---- generators -------------------------------------------------------------------------

/** A line no parser's grammar accepts: letters and plain punctuation, starting with a letter. */
export const garbageLine = fc
  .tuple(
    fc.constantFrom(...'QXZqxzWK'),
    fc.string({
      unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789 -_/.,;()[]{}<>!?"\'`~@$%^&*'),
      maxLength: 60,
    }),
  )
  .map(([a, b]) => `${a}${b}`.replace(/\.{3,}/g, '.').replace(/npu-smi/gi, 'np'));

const nasty = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 80 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.constantFrom(
    '\u001b]0;owned\u0007',
    '\u001b[2J\u001b[31m',
    '\u009b6n',
    '\u202e',
    '\u0000\u0001\u00ff',
    '<script>alert(1)</script>',
    '...',
    '…',
    '|',
    '| ... | ... |',
    '+====+',
    ' / ',
    ' : ',
    '=',
    '==> /x',
    '"',
    '\r',
    '*'.repeat(64),
    'a*'.repeat(30),
    'Include /dev/zero',
    'Include *',
    `Match exec "touch ${MARKER}"`,
    `Match exec "touch ${MARKER}" host *`,
    `Host *\n  ProxyCommand touch ${MARKER}\n  LocalCommand touch ${MARKER}\n  PermitLocalCommand yes`,
    `CanonicalizeHostName yes\nCanonicalDomains example.invalid`,
    'Host *\n  HostName %h',
    'NA',
    '-1',
    '99999999999999999999999',
    'NaN',
    '1e309',
  ),
);

type Mutation =
  | { op: 'delete'; at: number }
  | { op: 'duplicate'; at: number }
  | { op: 'insert'; at: number; text: string }
  | { op: 'replace'; at: number; text: string }
  | { op: 'splice'; at: number; text: string }
  | { op: 'truncate'; at: number }
  | { op: 'repeat'; at: number; times: number }
  | { op: 'swap'; at: number; with: number }
  | { op: 'crlf' };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ op: fc.constant('delete' as const), at: fc.nat() }),
  fc.record({ op: fc.constant('duplicate' as const), at: fc.nat() }),
  fc.record({ op: fc.constant('insert' as const), at: fc.nat(), text: nasty }),
  fc.record({ op: fc.constant('replace' as const), at: fc.nat(), text: nasty }),
  fc.record({ op: fc.constant('splice' as const), at: fc.nat(), text: nasty }),
  fc.record({ op: fc.constant('truncate' as const), at: fc.nat() }),
  fc.record({
    op: fc.constant('repeat' as const),
    at: fc.nat(),
    times: fc.integer({ min: 2, max: 4000 }),
  }),
  fc.record({ op: fc.constant('swap' as const), at: fc.nat(), with: fc.nat() }),
  fc.record({ op: fc.constant('crlf' as const) }),
);

export function applyMutation(text: string, m: Mutation): string {
  const lines = text.split('\n');
  const i = lines.length ? (m.op === 'crlf' ? 0 : m.at % lines.length) : 0;
  switch (m.op) {
    case 'delete':
      lines.splice(i, 1);
      break;
    case 'duplicate':
      lines.splice(i, 0, lines[i] ?? '');
      break;
    case 'insert':
      lines.splice(i, 0, m.text);
      break;
    case 'replace':
      lines[i] = m.text;
      break;
    case 'splice': {
      const pos = m.at % Math.max(1, text.length);
      return text.slice(0, pos) + m.text + text.slice(pos);
    }
    case 'truncate':
      return text.slice(0, m.at % Math.max(1, text.length));
    case 'repeat':
      // a huge line or a huge number of lines, still well inside a megabyte
      if ((lines[i] ?? '').length * m.times > 1_000_000) break;
      if (m.at % 2) lines[i] = (lines[i] ?? '').repeat(m.times);
      else lines.splice(i, 0, ...Array<string>(Math.min(m.times, 2000)).fill(lines[i] ?? ''));
      break;
    case 'swap': {
      const j = m.with % Math.max(1, lines.length);
      [lines[i], lines[j]] = [lines[j] ?? '', lines[i] ?? ''];
      break;
    }
    case 'crlf':
      return text.replace(/\n/g, '\r\n');
  }
  return lines.join('\n');
}

/** Real samples mutated 0–6 times, or generated text, or random bytes read as UTF-8. */
export function inputsFrom(fixtures: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    {
      weight: 6,
      arbitrary: fc
        .tuple(fc.constantFrom(...fixtures), fc.array(mutation, { maxLength: 6 }))
        .map(([base, ms]) => ms.reduce(applyMutation, base)),
    },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 2000 }) },
    {
      weight: 1,
      arbitrary: fc.uint8Array({ maxLength: 4000 }).map((b) => Buffer.from(b).toString('utf8')),
    },
    { weight: 1, arbitrary: fc.array(nasty, { maxLength: 40 }).map((l) => l.join('\n')) },
  );
}

/** A fixture with one garbage line inserted: returns the text and the 1-based line number. */
export function withGarbageLine(fixtures: string[]): fc.Arbitrary<{ text: string; line: number }> {
  return fc.tuple(fc.constantFrom(...fixtures), fc.nat(), garbageLine).map(([base, at, g]) => {
    const lines = base.split('\n');
    const i = at % (lines.length + 1);
    lines.splice(i, 0, g);
    return { text: lines.join('\n'), line: i + 1 };
  });
}

// eslint-disable-next-line no-control-regex
export const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e]/;
