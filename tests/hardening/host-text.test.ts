import { writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseNpuSmiInfo } from '../../electron/core/parsers/npu-smi';
import { parseNpuSmiKeyValue } from '../../electron/core/parsers/key-value';
import { renderMarkdown } from '../../electron/core/reports/render-md';
import { evidenceHtml } from '../../electron/core/reports/html-kit';
import type { Report } from '../../shared/api';
import { amw } from '../support/cli';
import { tempDir } from '../support/temp';

const fixture = (name: string) =>
  readFileSync(join(__dirname, '..', 'fixtures', 'npu-smi', name), 'utf8');
// eslint-disable-next-line no-control-regex
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

describe('raw bytes from a host never reach the user (issue 17 item 4)', () => {
  const title = '\u001b]0;owned\u0007';
  const hostile = fixture('info-s2.txt')
    .replace('vllm', `vllm${title}\u001b[31m`)
    .replace('| OK ', '| \u001b[2J\u009b6n');

  it('the parser keeps no control bytes in values or warnings', () => {
    const r = parseNpuSmiInfo(`${hostile}\n\u0000\u0001binary\u00ff\n`);
    const json = JSON.stringify(r);
    expect(JSON.parse(json)).toEqual(r);
    expect(RAW_CONTROL.test(r.processes.map((p) => p.name).join(''))).toBe(false);
    for (const w of r.warnings) expect(RAW_CONTROL.test(w)).toBe(false);
    expect(r.processes.find((p) => p.pid === 14247)!.name).toContain('\\x1b]0;owned\\x07');
    expect(r.warnings.some((w) => /unknown health value/.test(w))).toBe(true);
    const kv = parseNpuSmiKeyValue('Chip Name : 910B\u001b]2;x\u0007\n\u001b[1mjunk\n');
    for (const w of kv.warnings) expect(RAW_CONTROL.test(w)).toBe(false);
  });

  it('`amw parse npu-smi` prints escapes, never raw ESC/C1 (text and --json)', async () => {
    const dir = tempDir();
    const file = join(dir, 'smi.txt');
    writeFileSync(file, hostile);
    for (const args of [[], ['--json']]) {
      const r = await amw(['parse', 'npu-smi', file, ...args]);
      expect(r.code).toBe(0);
      expect(RAW_CONTROL.test(r.stdout + r.stderr)).toBe(false);
      expect(r.stdout).toContain('owned');
    }
    const json = await amw(['parse', 'npu-smi', file, '--json']);
    expect(() => JSON.parse(json.stdout)).not.toThrow();
  });

  it('`amw parse npu-smi /dev/zero` ends with a bounded-input error instead of hanging', async () => {
    const r = await amw(['parse', 'npu-smi', '/dev/zero']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/larger than 16 MiB/);
  });

  it('the Markdown report escapes host text: no <script>, no link, no fence break-out', () => {
    const evil = '<script>alert(1)</script>[x](http://evil)';
    const report = {
      language: 'en',
      session: { id: 1, title: evil, project: null, codeCommit: null },
      generatedAt: '2026-01-01',
      generator: { name: 'amw', version: '0' },
      namesHidden: false,
      summary: {
        readiness: 'ready',
        stages: [{ stage: 'env', status: 'pass', hosts: [{ host: evil, status: 'pass' }] }],
        blocking: [{ check: 'c`x', host: evil, stage: 'env', title: evil, summary: evil }],
        waivers: [],
      },
      changes: null,
      inventories: [
        {
          host: evil,
          chip: '910B\u001b]0;t\u0007',
          chipCount: 1,
          health: 'OK',
          cann: null,
          driver: null,
          firmware: null,
          python: null,
          torch: null,
          torchNpu: null,
          differs: [],
        },
      ],
      stages: [
        {
          stage: 'env',
          host: evil,
          status: 'fail',
          checks: [{ id: 'a', title: evil, status: 'fail', summary: evil, remediation: evil }],
        },
      ],
      code: null,
      ops: [],
      review: { comments: [{ target: 't', author: evil, at: 'x', text: evil }], decisions: [] },
    } as unknown as Report;
    const out = renderMarkdown(report);
    expect(out).not.toContain('<script>');
    expect(out).not.toContain('](http');
    expect(out).toContain('&lt;script&gt;');
    expect(RAW_CONTROL.test(out)).toBe(false);
  });
});

describe('evidence from a host in the HTML report', () => {
  it('keys, values and column names are escaped text: no element, no attribute break-out', () => {
    const evil = '<img src=x onerror=alert(1)>"\'&';
    const html = evidenceHtml(
      {
        [evil]: evil,
        rows: [{ [evil]: evil }],
        list: [evil],
        deep: { a: { b: { c: { d: evil } } } },
      },
      (n) => `${n} more`,
    );
    expect(html).not.toMatch(/<img|<script/);
    expect(html).not.toContain('"\'&');
    expect(html.match(/&lt;img src=x onerror=alert\(1\)&gt;/g)).toHaveLength(6);
  });
});

describe('pasted npu-smi with elisions (issue 17 item 8)', () => {
  it('a copy with cards cut out as `...` warns, naming the line', () => {
    const lines = fixture('info-s3.txt').split('\n');
    // keep the header and the first two cards, then the author's elision, then the rest
    const at = lines.findIndex((l, i) => i > 12 && /^\+=+/.test(l));
    const pasted = [...lines.slice(0, at + 1), '...', ...lines.slice(at + 1 + 9)].join('\n');
    const r = parseNpuSmiInfo(pasted);
    expect(r.warnings).toContainEqual(
      expect.stringMatching(new RegExp(`^line ${at + 2}: rows were cut out`)),
    );
  });

  it('every line outside the grammar is a warning naming it; known prompts are not', () => {
    const r = parseNpuSmiInfo(
      `[root@host ~]# npu-smi info\n${fixture('info-s2.txt')}\nsome stray text\n| … | … |\n`,
    );
    expect(r.warnings.filter((w) => /prompt|npu-smi info/.test(w))).toEqual([]);
    expect(r.warnings).toContainEqual(
      expect.stringMatching(/^line \d+: not part of an npu-smi table: some stray text/),
    );
    expect(r.warnings).toContainEqual(expect.stringMatching(/^line \d+: rows were cut out/));
    expect(r.devices).toHaveLength(2);
  });
});

describe('parsers stay linear on hostile lines (found by the fuzz suite)', () => {
  it('a long -t line without " : " is a warning, not a quadratic regex scan', () => {
    const r = parseNpuSmiKeyValue(
      `Chip Name : 910B\n${'x '.repeat(3000)}\n${'y '.repeat(300_000)}\n`,
    );
    expect(r.blocks).toEqual([{ 'Chip Name': '910B' }]);
    expect(r.warnings).toEqual([
      expect.stringMatching(/^line 2: not a "label : value" line/),
      expect.stringMatching(/^line 3: 600000 characters long/),
    ]);
  });

  it('a flood of garbage lines keeps 200 warnings and counts the rest', () => {
    const r = parseNpuSmiKeyValue('garbage\n'.repeat(100_000));
    expect(r.warnings).toHaveLength(201);
    expect(r.warnings[200]).toMatch(/^99801 more warnings not shown/);
  });

  it('a label called __proto__ is kept as a plain key', () => {
    const r = parseNpuSmiKeyValue('__proto__ : 1\nChip Name : x\n');
    expect(Object.keys(r.blocks[0]!)).toEqual(['__proto__', 'Chip Name']);
  });
});
