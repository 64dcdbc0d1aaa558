// The fast scanners (csv-scan.ts, trace-scan.ts) against the maintained parsers they fall back to
// (papaparse, @streamparser/json): the same import on every fixture, the same rows / events and
// warnings on generated tricky inputs, at every read size and cut-off point.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ProfileWarning } from '../../../../shared/stages/profiling/api';
import { scanCsv } from './csv-scan';
import { streamCsv, type ParserChoice } from './csv-stream';
import { importProfile } from './import';
import { scanTrace } from './trace-scan';
import { streamTrace } from './trace-stream';
import { REFERENCE } from '../../../../tests/support/reference';

const F = `${REFERENCE}/fixtures/profiling`;
const tmp = mkdtempSync(join(tmpdir(), 'amw-prof-diff-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
let n = 0;
const file = (name: string, body: string | Buffer) => {
  const p = join(tmp, `${n++}-${name}`);
  writeFileSync(p, body);
  return p;
};

/** A seeded generator, so a failing case can be found again. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    return s / 2 ** 32;
  };
}

describe('every fixture imports the same through the fast scanners and the maintained parsers', () => {
  for (const dir of readdirSync(F).filter((d) => !d.endsWith('.md')))
    it(dir, async () => {
      const fast = await importProfile(join(F, dir));
      const ref = await importProfile(join(F, dir), { parser: 'reference' });
      expect(fast).toStrictEqual(ref);
      expect(fast.bytes).toBeGreaterThan(0);
    });
});

async function csvRows(path: string, parser: ParserChoice, cols: readonly number[] | true) {
  const warnings: ProfileWarning[] = [];
  const rows: unknown[] = [];
  const read = await streamCsv(
    path,
    'x.csv',
    (w) => void warnings.push(w),
    () => cols,
    ({ line, fields }) => {
      // only the columns asked for are decoded on the fast path: compare those and the count
      const picked = cols === true ? [...fields] : cols.map((c) => fields[c]);
      rows.push([line, fields.length, picked]);
    },
    undefined,
    parser,
  );
  return { rows, warnings, header: read.header, count: read.rows };
}

const CSV_CASES: Record<string, string> = {
  'quoted multi-line, CRLF':
    'Name,Type,Accelerator Core,Duration(us),Input Shapes\r\nA,MatMul,AI_CORE,10,"""1,2;\r\n3,4"""\r\nB,Cast,AI_CPU,\t5.5\t,N/A\r\nC,Cast,AI_CPU,7\r\n',
  'ragged, N/A, trailing TAB, blank lines':
    'Name,Type,Accelerator Core,Duration(us)\n\nA,T,AI_CORE,1.5\t\nB,T,N/A,N/A\nC,T\n\nD,T,AI_CPU,3,extra,more\n',
  'no newline at the end': 'Name,Duration(us)\nA,1\nB,2',
  BOM: '\uFEFFName,Duration(us)\nA,1\n',
  'non-ASCII names': 'Name,Duration(us)\n算子_é,1\n"引号,内",2\n',
  'a quote inside a bare field (papaparse from that row on)':
    'Name,Duration(us)\nA,1\nB"x,2\nC,3\n"D""q",4\n',
  'text after a closing quote': 'Name,Duration(us)\nA,1\n"B"x,2\nC,3\n',
  'a quote never closed': 'Name,Duration(us)\nA,1\n"B,2\nC,3\n',
  'bare CR line endings': 'Name,Duration(us)\rA,1\rB,2\r',
  'a CR inside a field of an LF file': 'Name,Duration(us)\nA\rB,1\nC,2\r\n',
  'a bare LF in a CRLF file': 'Name,Duration(us)\r\nA,1\r\nB\nC,2\r\nD,3\r\n',
  'empty quoted and doubled quotes': 'Name,Duration(us),S\n"",1,""""\n"a""b",2,"x\n\ny"\n',
  'space after a closing quote': 'Name,Duration(us)\n"A" ,1\nB,2\n',
};

describe('CSV: the byte scanner gives the rows and warnings papaparse gives', () => {
  for (const [name, body] of Object.entries(CSV_CASES))
    it(name, async () => {
      const p = file('k.csv', body);
      for (const cols of [true, [0, 1]] as const) {
        const fast = await csvRows(p, 'fast', cols);
        const ref = await csvRows(p, 'reference', cols);
        expect(fast).toStrictEqual(ref);
      }
    });

  it('the tricky cases read the same at every read size (rows across the buffer end)', async () => {
    for (const body of Object.values(CSV_CASES)) {
      const p = file('k.csv', body);
      const whole: unknown[] = [];
      const wholeEnd = await scanCsv(p, {
        want: null,
        row: (f, c, l, b) => (whole.push([...f], c, l, b), true),
      });
      for (const size of [1, 2, 3, 5, 8, 13]) {
        const got: unknown[] = [];
        const end = await scanCsv(
          p,
          { want: null, row: (f, c, l, b) => (got.push([...f], c, l, b), true) },
          undefined,
          size,
        );
        expect(got).toStrictEqual(whole);
        expect(end).toStrictEqual(wholeEnd);
      }
    }
  });

  it('1000 random files of commas, quotes, CR, LF, TAB and multi-byte text', async () => {
    const next = rng(15);
    const alphabet = ['a', 'b', '1', '.', ',', ',', '"', '\n', '\n', '\r', '\r\n', '\t', ' ', 'é'];
    for (let k = 0; k < 1000; k++) {
      let body = 'Name,Type,Duration(us)\n';
      const len = Math.floor(next() * 60);
      for (let i = 0; i < len; i++) body += alphabet[Math.floor(next() * alphabet.length)];
      const p = file('r.csv', body);
      const fast = await csvRows(p, 'fast', [0, 2]);
      const ref = await csvRows(p, 'reference', [0, 2]);
      expect(fast, JSON.stringify(body)).toStrictEqual(ref);
    }
  }, 120_000);

  it('the import gives the same kernel summary on a generated 5 MB table with every oddity', async () => {
    const next = rng(7);
    const lines = [
      'Step Id,Name,Type,OP State,Accelerator Core,Duration(us),Input Shapes,Output Shapes',
    ];
    for (let i = 0; i < 40_000; i++) {
      const shape = next() < 0.1 ? '"""4096,1;\n2,2"""' : '"""4096,1024"""';
      const dur =
        next() < 0.05 ? 'N/A' : `${(next() * 1000).toFixed(3)}${next() < 0.3 ? '\t' : ''}`;
      const core = ['AI_CORE', 'AI_CPU', 'MIX_AIC', 'HCCL', 'N/A'][i % 5];
      const row = `${i >> 10},op_${i % 97},T${i % 13},${i % 3 ? 'dynamic' : 'static'},${core},${dur},${shape},""`;
      lines.push(i % 997 === 0 ? row.split(',').slice(0, 4).join(',') : row);
    }
    const dir = mkdtempSync(join(tmp, 'big-'));
    writeFileSync(join(dir, 'kernel_details.csv'), lines.join('\r\n'));
    const fast = await importProfile(dir);
    const ref = await importProfile(dir, { parser: 'reference' });
    expect(fast).toStrictEqual(ref);
    expect(fast.kernels!.count).toBe(40_000);
    expect(fast.warnings.length).toBeGreaterThan(0); // ragged rows named by line
  }, 120_000);
});

async function traceEvents(path: string, parser: ParserChoice) {
  const warnings: ProfileWarning[] = [];
  const events: unknown[] = [];
  const r = await streamTrace(
    path,
    'trace_view.json',
    (w) => void warnings.push(w),
    (e) => {
      events.push([e.name, e.ph, e.cat, e.pid, e.tid, e.ts, e.dur, e.args]);
    },
    undefined,
    parser,
  );
  return { events, warnings, count: r.events };
}

const TRACE_CASES: Record<string, string> = {
  traceEvents:
    '{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "x"}], "traceEvents": [{"ph": "X", "name": "ProfilerStep#2", "pid": 1, "tid": 1, "ts": 10, "dur": 5.5}], "traceName": "t"}',
  'escapes, numbers of every form, duplicate keys':
    '[{"name": "a\\"b\\u00e9\\n", "ph": "X", "dur": -0, "ts": 1e3, "pid": "CPU functions", "tid": 12345678901234567890},' +
    '{"name": "n", "dur": 0.1, "dur": 313.88628125, "cat": "cpu_op", "args": {"a": [1, {"b": null}], "c": true}},' +
    '{"name": "big", "dur": 1.7976931348623157e308, "ts": "1742490378358140.950"}, {"dur": 123456789012345678}]',
  'non-object elements and empty objects': '[1, "x", null, [], {}, {"name": "z"}, true]',
  'pretty-printed':
    '[\n  {\n    "name": "a",\n    "ph": "M",\n    "args": {"name": "CANN"}\n  }\n]\n',
  'text after the root': '[{"name": "a"}] x',
  'a BOM': '\uFEFF[{"name": "a"}]',
  'traceEvents not an array': '{"traceEvents": {"a": {"name": "x"}}}',
  'a bad literal in args': '[{"name": "a"}, {"name": "b", "args": {"x": tru}}, {"name": "c"}]',
  'a comma missing in args': '[{"name": "a"}, {"name": "b", "args": {"x": 1 "y": 2}}]',
  'a raw newline in a string': '[{"name": "a"}, {"name": "b\nc"}]',
  'an empty file but for an array': '[]',
  'an empty object root': '{}',
};

describe('trace: the byte scanner gives the events and warnings @streamparser/json gives', () => {
  for (const [name, body] of Object.entries(TRACE_CASES))
    it(name, async () => {
      const p = file('t.json', body);
      expect(await traceEvents(p, 'fast')).toStrictEqual(await traceEvents(p, 'reference'));
    });

  it('the fixture cut off at every byte: the same events and the same warning', async () => {
    const whole = readFileSync(join(F, 'trace_view_small/trace_view.json'));
    for (let cut = 1; cut <= whole.length; cut++) {
      const p = file('cut.json', whole.subarray(0, cut));
      const fast = await traceEvents(p, 'fast');
      const ref = await traceEvents(p, 'reference');
      expect(fast, `cut at ${cut}`).toStrictEqual(ref);
    }
  }, 120_000);

  it('the tricky cases read the same at every read size (events across the buffer end)', async () => {
    for (const body of [
      ...Object.values(TRACE_CASES),
      readFileSync(join(F, 'trace_view_small/trace_view.json'), 'utf8'),
    ]) {
      const p = file('t.json', body);
      const at = async (size?: number) => {
        const got: unknown[] = [];
        const end = await scanTrace(
          p,
          (e) => void got.push([e.name, e.ph, e.cat, e.pid, e.tid, e.ts, e.dur, e.args]),
          undefined,
          size,
        );
        return { got, end };
      };
      const whole = await at();
      for (const size of [1, 2, 3, 7, 16]) expect(await at(size)).toStrictEqual(whole);
    }
  });

  it('5000 random numbers read from bytes are the numbers JSON.parse reads', async () => {
    const next = rng(3);
    const nums: string[] = [];
    for (let i = 0; i < 5000; i++) {
      const int = String(Math.floor(next() * 10 ** Math.floor(next() * 18)));
      const frac =
        next() < 0.7
          ? `.${String(Math.floor(next() * 10 ** (1 + Math.floor(next() * 12)))).padStart(3, '0')}`
          : '';
      const exp = next() < 0.1 ? `e${next() < 0.5 ? '-' : '+'}${Math.floor(next() * 30)}` : '';
      nums.push(`${next() < 0.2 ? '-' : ''}${int}${frac}${exp}`);
    }
    const p = file('n.json', `[${nums.map((d) => `{"dur": ${d}, "pid": ${d}}`).join(',')}]`);
    const got: unknown[] = [];
    await scanTrace(p, (e) => void got.push(e.dur, e.pid));
    expect(got).toStrictEqual(nums.flatMap((d) => [JSON.parse(d), JSON.parse(d)]));
  }, 120_000);
});
