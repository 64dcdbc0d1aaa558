import { execFileSync } from 'node:child_process';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { amw } from '../../../tests/support/cli';
import { tempDir } from '../../../tests/support/temp';
import { analyzeSource } from './analyze-file';
import { migratedFiles, unifiedPatch } from './fix';
import { pythonParser } from './python-parser';
import { loadRules } from './rules';
import { scanProject } from './scan';

const NANOGPT = join(__dirname, '../../../tests/fixtures/code/nanogpt-ddp');

async function analyze(src: string) {
  return analyzeSource(await pythonParser(), src, 'x.py', loadRules(), 'en');
}

describe('analyzer: names through imports', () => {
  it('resolves aliases: import torch as T, from torch import cuda, from torch.cuda.amp import autocast as ac', async () => {
    const r = await analyze(
      'import torch as T\nfrom torch import cuda\nfrom torch.cuda.amp import autocast as ac\nT.cuda.manual_seed(0)\ncuda.synchronize()\nwith ac():\n    pass\n',
    );
    expect(r.findings.map((f) => `${f.line}:${f.ruleId}`)).toEqual([
      '3:amp.cuda-amp',
      '4:cuda.api',
      '5:cuda.api',
      '6:amp.cuda-amp',
    ]);
  });

  it('ignores look-alikes: a local variable named cuda, comments, and strings that only contain the word', async () => {
    const r = await analyze(
      'cuda = 3\nprint(cuda + 1)\n# model.cuda()\nmsg = "use cuda when you can"\n',
    );
    expect(r.findings).toEqual([]);
  });

  it('reads f-strings: f"cuda:{rank}" is a device string and only its literal part is rewritten', async () => {
    const r = await analyze('import torch\nrank = 0\nd = torch.device(f"cuda:{rank}")\n');
    const f = r.findings.find((x) => x.ruleId === 'device.cuda-string')!;
    expect(f).toMatchObject({ line: 3, column: 18 });
    expect(f.fix?.edits).toEqual([
      { start: expect.any(Number), end: expect.any(Number), text: 'npu' },
    ]);
  });
});

describe('scan of a nanoGPT-style project (AMP + DDP)', () => {
  it('flags exactly what a porter changes', async () => {
    const scan = await scanProject(NANOGPT);
    expect(scan.findings.map((f) => `${f.file}:${f.line}:${f.ruleId}`)).toEqual([
      'requirements.txt:1:req.torch-npu',
      'requirements.txt:3:lib.flash-attn',
      'train.py:3:add.import-torch-npu',
      'train.py:3:add.compile-mode',
      'train.py:12:dist.nccl',
      'train.py:15:device.cuda-string',
      'train.py:16:cuda.api',
      'train.py:18:device.cuda-string',
      'train.py:18:cuda.api',
      'train.py:20:cuda.backends',
      'train.py:21:cuda.backends',
      'train.py:22:cuda.api',
      'train.py:23:amp.autocast-cuda',
      'train.py:23:device.cuda-string',
      'train.py:24:amp.cuda-amp',
      'train.py:28:optim.fused-kwarg',
      'train.py:30:device.device-ids',
      'train.py:34:device.cuda-method',
      'train.py:40:cuda.api',
      'train.py:45:cuda.api',
    ]);
    expect(scan.files).toBe(2);
    expect(scan.effort.dimensions).toMatchObject({ mixedPrecision: 2, multiCard: 2 });
  });

  it('rewrite mode: every changed file still parses (by Python itself) and reads like NPU code', async () => {
    const scan = await scanProject(NANOGPT);
    const changed = migratedFiles(scan, 'rewrite', await pythonParser());
    const train = changed.get('train.py')!;
    expect(train.parses).toBe(true);
    expect(train.after).toContain('import torch\nimport torch_npu\n');
    expect(train.after).toContain('init_process_group(backend="hccl")');
    expect(train.after).toContain('device = f"npu:{ddp_local_rank}"');
    expect(train.after).toContain('torch.npu.set_device(device)');
    expect(train.after).toContain('scaler = torch.npu.amp.GradScaler(');
    expect(train.after).toContain('y.npu()');
    expect(train.after).toContain('# nanoGPT-style training loop'); // comments survive
    const out = tempDir();
    writeFileSync(join(out, 'train.py'), train.after);
    execFileSync('python3', ['-m', 'py_compile', join(out, 'train.py')]);
  });

  it('the patch applies cleanly with git apply; transfer mode adds transfer_to_npu at the entry point only', async () => {
    const scan = await scanProject(NANOGPT);
    const patch = unifiedPatch(migratedFiles(scan, 'rewrite', await pythonParser()));
    const copy = tempDir();
    cpSync(NANOGPT, copy, { recursive: true });
    writeFileSync(join(copy, 'fix.patch'), patch);
    execFileSync('git', ['apply', '--check', 'fix.patch'], { cwd: copy });
    const transfer = migratedFiles(scan, 'transfer', await pythonParser());
    expect([...transfer.keys()]).toEqual(['train.py']);
    expect(transfer.get('train.py')!.after).toContain(
      'import torch\nimport torch_npu\nfrom torch_npu.contrib import transfer_to_npu\n',
    );
    expect(transfer.get('train.py')!.after).toContain('backend="nccl"'); // transfer_to_npu patches this at run time
  });

  it('amw scan: documented JSON, SARIF 2.1.0, a migrated copy, exit 1 on errors', async () => {
    const out = tempDir();
    const sarif = join(out, 'scan.sarif');
    const r = await amw([
      'scan',
      NANOGPT,
      '--json',
      '--sarif',
      sarif,
      '--fix',
      '--out',
      join(out, 'migrated'),
    ]);
    expect(r.code).toBe(1);
    const json = JSON.parse(r.stdout);
    expect(Object.keys(json)).toEqual(['root', 'files', 'lines', 'findings', 'effort']);
    expect(Object.keys(json.findings[0])).toEqual(
      expect.arrayContaining([
        'ruleId',
        'file',
        'line',
        'column',
        'endLine',
        'endColumn',
        'severity',
        'category',
        'message',
      ]),
    );
    const s = JSON.parse(readFileSync(sarif, 'utf8'));
    expect(s.version).toBe('2.1.0');
    expect(s.runs[0].results).toHaveLength(json.findings.length);
    expect(s.runs[0].results[0].locations[0].physicalLocation.region.startLine).toBe(1);
    expect(readFileSync(join(out, 'migrated', 'train.py'), 'utf8')).toContain('import torch_npu');
    expect(readFileSync(join(out, 'migrated', 'model.py'), 'utf8')).toBe(
      readFileSync(join(NANOGPT, 'model.py'), 'utf8'),
    );
    expect(readFileSync(join(NANOGPT, 'train.py'), 'utf8')).not.toContain('torch_npu'); // original untouched
  });
});

describe('scan inputs', () => {
  it('honours .gitignore in a git checkout and --exclude globs; finds CUDA sources and a broken file is a warning', async () => {
    const dir = tempDir();
    execFileSync('git', ['init', '-q', dir]);
    writeFileSync(join(dir, '.gitignore'), 'build_out/\n');
    const { mkdirSync } = await import('node:fs');
    for (const d of ['build_out', 'vendor', 'csrc']) mkdirSync(join(dir, d));
    writeFileSync(join(dir, 'build_out', 'gen.py'), 'import torch\nx = torch.zeros(1).cuda()\n');
    writeFileSync(join(dir, 'vendor', 'lib.py'), 'import torch\nx = torch.zeros(1).cuda()\n');
    writeFileSync(join(dir, 'csrc', 'kernel.cu'), '__global__ void k() {}\n');
    writeFileSync(join(dir, 'broken.py'), 'import torch\ndef f(:\n    torch.cuda.synchronize()\n');
    writeFileSync(join(dir, 'ok.py'), 'import numpy\nprint(numpy.zeros(3))\n');
    const scan = await scanProject(dir, { exclude: ['vendor'] });
    const files = [...new Set(scan.findings.map((f) => f.file))];
    expect(files).toEqual(['broken.py', 'csrc/kernel.cu']);
    expect(scan.warnings).toEqual([
      'broken.py: Python syntax errors; findings there may be incomplete',
    ]);
    await expect(scanProject(join(dir, 'nope'))).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});
