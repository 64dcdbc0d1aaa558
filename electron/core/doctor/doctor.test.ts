import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../../tests/support/temp';
import {
  Diagnoser,
  diagnosePath,
  diagnoseText,
  MAX_MATCHES_PER_RULE,
  MAX_UNMATCHED,
} from './diagnose';
import { loadDoctorRules, unsafeRegexReason } from './rules';
import { type AmwError } from '../../../shared/errors';
import { textIn } from '../i18n';
import { REFERENCE } from '../../../tests/support/reference';

const rules = loadDoctorRules();
const knowledgeDir = join(REFERENCE, 'knowledge');

describe('doctor rules (resources/knowledge/doctor)', () => {
  it('cover the failures the issue names', () => {
    const ids = new Set(rules.map((r) => r.id));
    for (const id of [
      'device-open-failed', // EE1001
      'ez9999-inner',
      'hccl-socket-timeout', // EI0006, HCCL_CONNECT_TIMEOUT
      'hccl-exec-timeout', // EI0002
      'hccp-busy', // EJ0001
      'op-compile-failed', // E40021, "Failed to compile op"
      'libascendcl-missing',
      'cann-not-sourced', // libhccl.so
      'cpu-fallback',
      'npu-out-of-memory',
      'set-env-non-interactive',
      'cann-torch-mismatch',
      'memlock-limit', // ulimit -l
      'fork-after-npu-init',
    ])
      expect(ids.has(id), id).toBe(true);
  });

  for (const rule of rules) {
    it(`${rule.id} recognises each of its real log lines`, () => {
      for (const example of rule.examples) {
        const found = diagnoseText(`${example}\n`).matches.map((m) => m.rule);
        expect(found, example).toContain(rule.id);
      }
    });
  }

  const knowledge = existsSync(knowledgeDir)
    ? [
        ...readdirSync(knowledgeDir)
          .filter((f) => f.endsWith('.md'))
          .map((f) => join(knowledgeDir, f)),
        ...readdirSync(join(knowledgeDir, 'seeds')).map((f) => join(knowledgeDir, 'seeds', f)),
      ]
        .map((f) => readFileSync(f, 'utf8'))
        .join('\n')
        .replace(/\s+/g, ' ')
    : null;
  it.skipIf(!knowledge)(
    'examples are quoted from ../shared/knowledge unless the rule says not',
    () => {
      for (const rule of rules) {
        if (rule.source.startsWith('Not in ../shared/knowledge')) continue;
        for (const example of rule.examples)
          expect(
            knowledge!.includes(example.replace(/\s+/g, ' ').trim()),
            `${rule.id}: ${example}`,
          ).toBe(true);
      }
    },
  );

  it('have both languages, a source and what proves them', () => {
    for (const r of rules) {
      expect(r.cause['zh-CN']).toMatch(/[\u4e00-\u9fff]/);
      expect(r.fix['zh-CN']).toMatch(/[\u4e00-\u9fff]/);
      expect(r.source.length).toBeGreaterThan(10);
    }
  });

  it('refuse patterns that backtrack catastrophically, accept the shipped ones', () => {
    expect(unsafeRegexReason('(a+)+$')).toMatch(/nested/);
    expect(unsafeRegexReason('(\\w*x)*y')).toMatch(/nested/);
    expect(unsafeRegexReason('(a)\\1')).toMatch(/backreference/);
    expect(unsafeRegexReason('.*a.*b.*c.*d')).toMatch(/unbounded/);
    expect(unsafeRegexReason('set_env\\.sh: line \\d+: \\w+: unbound variable')).toBeNull();
    expect(unsafeRegexReason('(torch_npu|atb)')).toBeNull();
  });

  it('a malformed rule file fails loading, naming the file and the field', () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, 'bad.json'),
      JSON.stringify({ category: 'hccl', rules: [{ id: 'x', severity: 'error' }] }),
    );
    expect(() => loadDoctorRules(dir)).toThrow(/bad\.json.*keywords/);
  });
});

// Lines from ascend-distributed.md §5.2 and ascend-host-formats.md §4.1/§4.6 put into one log,
// with ordinary output around them.
const MIXED = [
  'INFO 05-01 10:00:00 starting training, world size 2',
  "ImportError: libhccl.so: cannot open shared object file: No such file or directory. Please check that the cann package is installed. Please run 'source set_env.sh' in the CANN installation path.",
  'step 1 loss 2.31',
  'step 2 loss 2.12',
  "[W VariableFallbackKernel.cpp:51] Warning: CAUTION: The operator 'aten::isin.Tensor_Tensor_out' is not currently supported on the NPU backend and will fall back to run on the CPU. This may have performance implications. (function npu_cpu_fallback)",
  ...Array.from({ length: 20 }, (_, i) => `step ${i + 3} loss 1.9`),
  '[rank1]: RuntimeError: InnerRunOpApi:torch_npu/csrc/framework/OpParamMaker.cpp:281 OPS function error: HcclAllreduce, error code is 6',
  '[rank1]: EI0006: [PID: 1292363] 2025-04-08-18:07:20.444.436 Getting socket times out. Reason: Remote Rank did not send the data in time. Please check the reason for the rank being stuck',
].join('\n');

describe('diagnose', () => {
  it('counts a failure once, not again in the source line Python quotes above it', () => {
    const log = [
      'Traceback (most recent call last):',
      '  File "/usr/lib/python3/dist-packages/torch/cuda/__init__.py", line 221, in _lazy_init',
      '    raise AssertionError("Torch not compiled with CUDA enabled")',
      'AssertionError: Torch not compiled with CUDA enabled',
      '/usr/lib/python3/dist-packages/torch/cuda/amp/grad_scaler.py:118: UserWarning: torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.',
      '  warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.")',
      '  File "train.py", line 9, in main',
      '    raise ValueError("bad shape")',
      'ValueError: bad shape',
    ].join('\n');
    const r = diagnoseText(log);
    expect(r.matches.map((m) => [m.rule, m.line])).toEqual([
      ['cuda-call-on-npu-host', 4],
      ['amp-disabled-no-cuda', 5],
    ]);
    expect(r.unmatched.map((u) => u.line)).toEqual([9]);
  });

  it('gives several failures in the order they happened, with line, cause and fix', () => {
    const r = diagnoseText(MIXED);
    expect(r.matches.map((m) => [m.rule, m.line])).toEqual([
      ['cann-not-sourced', 2],
      ['cpu-fallback', 5],
      ['hccl-socket-timeout', 27],
    ]);
    const hccl = r.matches[2]!;
    expect(hccl.category).toBe('hccl');
    expect(hccl.fix).toContain('HCCL_CONNECT_TIMEOUT');
    expect(hccl.text.startsWith('[rank1]: EI0006')).toBe(true);
    // the HcclAllreduce line just before EI0006 is that failure's lead-in, not "unknown"
    expect(r.unmatched).toEqual([]);
  });

  it('speaks zh-CN when asked', () => {
    const r = diagnoseText(MIXED, 'zh-CN');
    expect(r.matches[0]!.cause).toMatch(/[\u4e00-\u9fff]/);
    expect(r.matches[0]!.title).toContain('CANN');
  });

  it('gives no match for text no rule knows, and lists the error-looking lines', () => {
    const log = [
      'Epoch 1/10',
      'Traceback (most recent call last):',
      '  File "train.py", line 12, in <module>',
      '    main()',
      "KeyError: 'labels'",
      'the error_handler module loaded',
      'all checks passed, 0 errors',
    ].join('\n');
    const r = diagnoseText(log);
    expect(r.matches).toEqual([]);
    expect(r.unmatched).toEqual([{ line: 5, text: "KeyError: 'labels'" }]);
  });

  it('a specific rule wins over a catch-all code on the same line', () => {
    const r = diagnoseText(
      'EZ9999: 2024-05-17-18:46:14.721.067  Op Equal does not has any binary.\n',
    );
    expect(r.matches.map((m) => m.rule)).toEqual(['op-no-binary']);
  });

  it('bounds a pattern that matches everywhere, and says so', () => {
    const line =
      "[W VariableFallbackKernel.cpp:51] Warning: CAUTION: The operator 'aten::isin' is not currently supported on the NPU backend and will fall back to run on the CPU.";
    const r = diagnoseText(Array.from({ length: 5000 }, () => line).join('\n'));
    expect(r.matches).toHaveLength(MAX_MATCHES_PER_RULE);
    expect(r.stats.suppressed).toEqual([
      { rule: 'cpu-fallback', count: 5000 - MAX_MATCHES_PER_RULE },
    ]);
    expect(r.notices.map((n) => n.key)).toContain('doctor.notice.suppressed');
    expect(r.stats.lines).toBe(5000);
  });

  it('bounds unknown error lines too', () => {
    const r = diagnoseText(
      Array.from({ length: 300 }, (_, i) => `ValueError: bad value ${i}`).join('\n'),
    );
    expect(r.unmatched).toHaveLength(MAX_UNMATCHED);
    expect(r.stats.unmatchedSuppressed).toBe(300 - MAX_UNMATCHED);
  });

  it('survives pathological input: huge lines, binary bytes, escape codes, chunks split anywhere', async () => {
    const d = new Diagnoser();
    d.startFile(undefined);
    // a 5 MB line with no newline, full of near-misses for every keyword
    const nearMiss = 'undefined symbo EE100 libhccl.s ERR9999 error '.repeat(120_000);
    d.feed(Buffer.from(nearMiss));
    d.feed(Buffer.from('\n'));
    // binary noise with NULs and a real failure in the middle, split across feeds
    const noise = Buffer.alloc(2 * 1024 * 1024);
    for (let i = 0; i < noise.length; i++) noise[i] = (i * 2654435761) >>> 24;
    d.feed(noise);
    const failure = Buffer.from(
      '\n\x1b[31m[rank0]:[W326 11:49:12.331714626 compiler_depend.ts:133] Warning: Warning: Device do not support double dtype now, dtype cast repalce with float. (function operator)\x1b[0m\n',
    );
    d.feed(failure.subarray(0, 40));
    d.feed(failure.subarray(40));
    // a line engineered against backtracking regexes
    d.feed(Buffer.from(`${'a'.repeat(100_000)} undefined symbol ${'x'.repeat(100_000)}!\n`));
    const r = d.end();
    expect(r.stats.binary).toBe(true);
    expect(r.stats.longLines).toBeGreaterThan(0);
    const dbl = r.matches.find((m) => m.rule.id === 'double-unsupported');
    expect(dbl?.text.startsWith('[rank0]')).toBe(true);
    for (const m of r.matches) expect(m.text.length).toBeLessThanOrEqual(4096);
    expect(r.notices.map((n) => n.key)).toEqual(
      expect.arrayContaining(['doctor.notice.binary', 'doctor.notice.longLines']),
    );
  });

  it('line numbers survive chunk boundaries', () => {
    const d = new Diagnoser();
    d.startFile(undefined);
    const text = `a\nb\nc\nEJ0001: 2024-05-21-11:57:54.167.645 Failed to initialize the HCCP process.\nd\n`;
    for (const ch of text) d.feed(Buffer.from(ch));
    const r = d.end();
    expect(r.matches.map((m) => [m.rule.id, m.line])).toEqual([['hccp-busy', 4]]);
    expect(r.stats.lines).toBe(5);
  });

  it('reads stdin, a file and a plog folder; a folder without logs says so', async () => {
    const fromStdin = await diagnosePath('-', 'en', { stdin: Readable.from([Buffer.from(MIXED)]) });
    expect(fromStdin.matches).toHaveLength(3);

    const dir = tempDir();
    mkdirSync(join(dir, 'debug', 'plog'), { recursive: true });
    writeFileSync(
      join(dir, 'debug', 'plog', 'plog-1292363_20250408180720.log'),
      '[ERROR] HCCL(17528,python3):2026-03-18-10:33:52.113.403 [hccl_socket_manager.cc:797] [18744][Wait][LinkEstablish]wait socket establish timeout, role[1] rank[1] timeout[120 s]\n',
    );
    writeFileSync(join(dir, 'debug', 'notes.bin'), 'EJ0001 not a log file name\n');
    const folder = await diagnosePath(dir, 'en');
    expect(folder.matches.map((m) => [m.rule, m.file, m.line])).toEqual([
      ['hccl-socket-timeout', join('debug', 'plog', 'plog-1292363_20250408180720.log'), 1],
    ]);
    expect(folder.stats.files).toBe(1);

    const empty = tempDir();
    writeFileSync(join(empty, 'model.bin'), 'x');
    const none = await diagnosePath(empty, 'en');
    expect(none.notices[0]).toEqual({ key: 'doctor.notice.noLogs', params: { path: empty } });
    expect(none.matches).toEqual([]);

    const missing = join(empty, 'missing.log');
    const err = await diagnosePath(missing, 'zh-CN').catch((e: AmwError) => e);
    expect(err).toMatchObject({ code: 'NOT_FOUND' });
    // why, in the reader's language: not Node's English "ENOENT: no such file or directory"
    expect((err as AmwError).message).toBe(`Cannot read ${missing}: no such file or folder`);
    expect(textIn('zh-CN')((err as AmwError).text)).toBe(`无法读取 ${missing}：文件或文件夹不存在`);
  });
});
