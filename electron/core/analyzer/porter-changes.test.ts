// What real porters change beyond torch.cuda.* and device strings: CUDA-extension call sites,
// Triton tuning, ops without an efficient NPU kernel, attention masks, AMP and optimizers, code to
// remove, project-level advice. Each fixture is written for these tests (patterns, not copies).
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { amw } from '../../../tests/support/cli';
import { tempDir } from '../../../tests/support/temp';
import { analyzeSource } from './analyze-file';
import { applyEdits, migratedFiles } from './fix';
import { pythonParser } from './python-parser';
import { loadRules } from './rules';
import { scanProject } from './scan';

const FIXTURES = join(__dirname, '../../../tests/fixtures/code');
const where = (scan: Awaited<ReturnType<typeof scanProject>>) =>
  scan.findings.map((f) => `${f.file}:${f.line}:${f.ruleId}`);
const find = (scan: Awaited<ReturnType<typeof scanProject>>, at: string) =>
  scan.findings.find((f) => `${f.file}:${f.line}:${f.ruleId}` === at)!;

async function analyze(src: string, lang: 'en' | 'zh-CN' = 'en') {
  return analyzeSource(await pythonParser(), src, 'x.py', loadRules(), lang);
}

describe('CUDA extensions at their call sites', () => {
  it('every ext.op(…) of a loaded or imported extension, the autograd Function around it, torch.ops of the project, setup.py / pyproject deps', async () => {
    const scan = await scanProject(join(FIXTURES, 'det-ops'));
    expect(where(scan)).toEqual([
      'detops/ops/deform_conv.py:4:ext.extension-import',
      'detops/ops/deform_conv.py:13:ext.extension-call',
      'detops/ops/deform_conv.py:18:ext.torch-ops',
      'detops/ops/roi_align.py:11:ext.autograd-function',
      'detops/ops/roi_align.py:15:ext.autograd-ctx-device',
      'detops/ops/roi_align.py:18:ext.extension-call',
      'detops/ops/roi_align.py:26:ext.extension-call',
      'detops/ops/roi_align.py:31:ext.extension-call',
      'pyproject.toml:5:req.torch-npu',
      'pyproject.toml:6:lib.triton',
      'pyproject.toml:7:lib.pynvml',
      'setup.py:7:lib.flash-attn',
      'setup.py:7:lib.xformers',
      'setup.py:8:ext.setup-ext-modules',
      'setup.py:9:ext.cuda-sources',
    ]);
    // the wrapper's op decides the concrete fix: NMS and RoIAlign have torchvision / torch_npu ops
    expect(find(scan, 'detops/ops/roi_align.py:31:ext.extension-call').fix?.description).toMatch(
      /torchvision\.ops\.nms.*npu_nms_v4/,
    );
    expect(find(scan, 'detops/ops/roi_align.py:18:ext.extension-call').fix?.description).toMatch(
      /npu_roi_align/,
    );
    expect(find(scan, 'detops/ops/deform_conv.py:13:ext.extension-call').message).toContain(
      '_C.deform_conv_forward(…)',
    );
    // torch.ops.aten is PyTorch's own; the extension's CPU kernel runs anywhere: neither is flagged
    expect(find(scan, 'detops/ops/deform_conv.py:18:ext.torch-ops').message).toContain(
      'torch.ops.detops.fused_gelu',
    );
  });

  it('rewrite mode records ctx.device in the Function, after its first run of ctx attributes', async () => {
    const scan = await scanProject(join(FIXTURES, 'det-ops'));
    const changed = migratedFiles(scan, 'rewrite', await pythonParser());
    const roi = changed.get('detops/ops/roi_align.py')!;
    expect(roi.parses).toBe(true);
    expect(roi.after).toContain(
      '        ctx.input_shape = input.size()\n        ctx.device = input.device.type\n',
    );
    // the same in transfer mode: transfer_to_npu does not reach into an extension
    const transfer = migratedFiles(scan, 'transfer', await pythonParser());
    expect(transfer.get('detops/ops/roi_align.py')!.after).toContain(
      'ctx.device = input.device.type',
    );
  });

  it('zh-CN text for the new rules', async () => {
    const r = await analyze(
      'from . import _C\nimport torch\n\ndef f(x):\n    return _C.roi_pool(x)\n',
      'zh-CN',
    );
    const f = r.findings.find((x) => x.ruleId === 'ext.extension-call')!;
    expect(f.message).toContain('已编译 CUDA 扩展');
    expect(f.fix?.description).toContain('torchvision.ops.roi_pool');
  });
});

describe('Triton tuning and occupancy', () => {
  it('SM counts (and the helper that returns one, where it is called), num_warps / num_stages once per file, allow_tf32, spin locks, libdevice', async () => {
    const scan = await scanProject(join(FIXTURES, 'triton-ops'));
    expect(where(scan)).toEqual([
      'kernels/reduce.py:4:triton.libdevice',
      'kernels/reduce.py:4:add.import-torch-npu',
      'kernels/reduce.py:8:cuda.api',
      'kernels/reduce.py:8:triton.sm-count',
      'kernels/reduce.py:11:lib.triton-kernel',
      'kernels/reduce.py:16:triton.libdevice',
      'kernels/reduce.py:17:triton.atomic-cas',
      'kernels/reduce.py:34:triton.allow-tf32',
      'kernels/reduce.py:41:triton.sm-count',
      'kernels/reduce.py:42:triton.num-warps',
      'kernels/reduce.py:42:triton.num-stages',
      'kernels/reduce.py:48:triton.block-grid',
    ]);
    // said once, with how many: two launches tune num_warps, two kernels, two lock operations
    expect(find(scan, 'kernels/reduce.py:42:triton.num-warps').message).toContain(
      '(2 in this file)',
    );
    expect(find(scan, 'kernels/reduce.py:11:lib.triton-kernel').message).toContain(
      '2 Triton kernel',
    );
    expect(find(scan, 'kernels/reduce.py:17:triton.atomic-cas').message).toContain('2 atomic lock');
    expect(find(scan, 'kernels/reduce.py:41:triton.sm-count').message).toContain('num_sms()');
    expect(find(scan, 'kernels/reduce.py:8:triton.sm-count').fix?.description).toContain(
      'num_aicore',
    );
  });

  it('rewrite mode removes the GPU tuning arguments everywhere (one finding, every place fixed)', async () => {
    const scan = await scanProject(join(FIXTURES, 'triton-ops'));
    const after = migratedFiles(scan, 'rewrite', await pythonParser()).get('kernels/reduce.py')!;
    expect(after.parses).toBe(true);
    expect(after.after).not.toMatch(/num_warps=|num_stages=|allow_tf32/);
    expect(after.after).toContain('sum_rows_kernel[grid](x, out, lock, x.shape[1], BLOCK=1024)\n');
    expect(after.after).toContain('acc += tl.dot(a, b)\n');
  });

  it('a backend switch with a PyTorch member: one project-level finding instead of the Triton ones', async () => {
    const scan = await scanProject(join(FIXTURES, 'backend-switch'));
    expect(where(scan)).toEqual([
      'fastops/backend.py:4:project.backend-switch',
      'fastops/backend.py:6:device.cuda-string',
      // where the project chooses a GPU backend: a default, a setting by its value, a return, an
      // argument (comparisons, a dispatch table and a value's name read it: quiet)
      'fastops/backend.py:10:project.backend-choice',
      'fastops/config.py:10:project.backend-choice',
      'fastops/config.py:16:project.backend-choice',
      'fastops/config.py:26:project.backend-choice',
      // a choice under a CUDA check is the PyTorch path's on an NPU already: only the check told
      'fastops/config.py:31:device.is-cuda',
      // a registration, a lookup, a comment, a docstring and another setting's string choose
      // nothing; under a test for a device that is not CUDA's, the choice is the NPU's
      'fastops/config.py:59:device.cuda-string',
      'fastops/config.py:60:project.backend-choice',
      'fastops/silu.py:5:add.import-torch-npu',
      'fastops/silu.py:32:device.cuda-method',
    ]);
    const f = find(scan, 'fastops/backend.py:4:project.backend-switch');
    // the file's kernel finding, its num_warps finding and its launch grid are left out
    expect(f.message).toContain('KernelBackend');
    expect(f.message).toContain('(PYTORCH)');
    expect(f.message).toContain('3 Triton findings left out');
    expect(f.fix?.description).toContain('KernelBackend.PYTORCH');
    expect(find(scan, 'fastops/config.py:10:project.backend-choice').message).toBe(
      '"triton" chooses KernelBackend\'s GPU kernels: on NPU choose "pytorch", the PyTorch path.',
    );
    const after = migratedFiles(scan, 'rewrite', await pythonParser());
    expect(after.get('fastops/backend.py')!.after).toContain('DEFAULT = KernelBackend.PYTORCH\n');
    const config = after.get('fastops/config.py')!;
    expect(config.parses).toBe(true);
    expect(config.after).toContain(
      'kernel_backend: str = "pytorch"\n    log_backend: str = "triton"',
    );
    expect(config.after).toContain('return KernelBackend.PYTORCH\n');
    expect(config.after).toContain('return silu(x, backend=KernelBackend.PYTORCH)');
    expect(config.after).toContain('if backend in (KernelBackend.TRITON, KernelBackend.CUDA):');
  });

  it("a backend switch speaks for its own project's kernels, not for a project scanned beside it", async () => {
    const scan = await scanProject(join(FIXTURES, 'side-by-side'));
    expect(where(scan)).toEqual([
      'fastrec/fastrec/backend.py:4:project.backend-switch',
      'fastrec/fastrec/backend.py:6:device.cuda-string',
      'fastrec/fastrec/backend.py:10:project.backend-choice',
      'fastrec/fastrec/silu.py:5:add.import-torch-npu',
      'fastrec/fastrec/silu.py:32:device.cuda-method',
      'vision/norm.py:6:lib.triton-kernel',
      'vision/norm.py:14:triton.block-grid',
      'vision/norm.py:14:triton.num-warps',
    ]);
    expect(find(scan, 'fastrec/fastrec/backend.py:4:project.backend-switch').message).toContain(
      '3 Triton findings left out',
    );
  });
});

describe('ops without an efficient NPU kernel, attention, AMP, optimizers', () => {
  it('model code: exactly the constructs porters work around', async () => {
    const scan = await scanProject(join(FIXTURES, 'model-zoo'));
    expect(where(scan)).toEqual([
      'model.py:6:op.multivariate-normal',
      'model.py:6:add.import-torch-npu',
      'model.py:12:op.complex-rope',
      'model.py:16:op.complex-rope',
      'model.py:22:op.float64',
      'model.py:23:op.float64-method',
      'model.py:33:fused.rms-norm',
      'model.py:47:fused.gated-gelu',
      'model.py:58:attn.inf-mask',
      'model.py:59:op.baddbmm',
      'model.py:60:attn.masked-softmax',
      'model.py:61:op.cpu-scalar-tensor',
      'model.py:68:op.sparse-grad',
      'model.py:71:op.int64-cumsum',
      'model.py:74:op.inference-mode',
      'model.py:76:op.topk-smallest',
      'model.py:80:op.multivariate-normal',
      'train.py:6:amp.library-scaler',
      'train.py:13:add.import-torch-npu',
      'train.py:13:add.compile-mode',
      'train.py:16:attn.xformers-switch',
      'train.py:17:lib.xformers',
      'train.py:19:lib.xformers-call',
      'train.py:23:amp.overflow-check',
      'train.py:27:device.cuda-method',
      'train.py:28:optim.npu-fused',
      'train.py:29:amp.grad-scaler-cuda',
      'train.py:29:device.cuda-string',
      'train.py:30:amp.library-scaler',
      'train.py:31:dist.nccl',
      'train.py:32:dist.nccl-condition',
      'train.py:33:cuda.api',
      'train.py:34:dist.accelerate-multi-gpu',
      'train.py:35:device.cuda-method',
      'train.py:39:dist.reduce-avg',
    ]);
    // apex is imported in try/except ImportError: the project runs without it, so neither the
    // import nor amp.initialize is a finding
    expect(scan.findings.some((f) => f.ruleId.includes('apex'))).toBe(false);
  });

  it('rewrite mode: inference_mode → no_grad, sparse=False, GradScaler("npu"), MULTI_NPU; the file still parses', async () => {
    const scan = await scanProject(join(FIXTURES, 'model-zoo'));
    const changed = migratedFiles(scan, 'rewrite', await pythonParser());
    const model = changed.get('model.py')!;
    expect(model.parses).toBe(true);
    expect(model.after).toContain('@torch.no_grad()');
    expect(model.after).toContain('mode="sum", sparse=False)');
    const train = changed.get('train.py')!;
    expect(train.parses).toBe(true);
    expect(train.after).toContain('torch.amp.GradScaler("npu")');
    expect(train.after).toContain('DistributedType.MULTI_NPU');
    const out = tempDir();
    writeFileSync(join(out, 'model.py'), model.after);
    writeFileSync(join(out, 'train.py'), train.after);
    execFileSync('python3', ['-m', 'py_compile', join(out, 'model.py'), join(out, 'train.py')]);
  });

  it('look-alikes stay quiet: a loss .pow(2).mean(), x.float() compared, gelu outside a product, a torch.tensor with a device', async () => {
    const r = await analyze(
      [
        'import torch',
        'import torch.nn.functional as F',
        'def f(x, y, mask):',
        '    loss = (x - y).pow(2).mean()',
        '    h = F.gelu(x) + y',
        '    z = torch.max(x, torch.tensor(0.0, device=x.device))',
        '    p = F.softmax(x, dim=-1)',
        '    e = torch.full((3,), 0.0)',
        '    return loss, h, z, p, e, x.cumsum(-1)',
        '',
      ].join('\n'),
    );
    expect(r.findings).toEqual([]);
  });
});

describe('set_device uses the rank in scope', () => {
  it('a function launched by mp.spawn: its first parameter, not LOCAL_RANK', async () => {
    const src = [
      'import os',
      'import torch',
      'import torch.distributed as dist',
      'import torch.multiprocessing as mp',
      '',
      'def worker(rank, world_size):',
      '    dist.init_process_group("nccl", rank=rank, world_size=world_size)',
      '',
      'if __name__ == "__main__":',
      '    mp.spawn(worker, args=(8,), nprocs=8)',
      '',
    ].join('\n');
    const r = await analyze(src);
    const f = r.findings.find((x) => x.ruleId === 'add.set-device')!;
    const after = applyEdits(src, f.fix!.edits);
    expect(after).toContain('    torch.npu.set_device(rank)\n    dist.init_process_group(');
    expect(after).not.toContain('LOCAL_RANK');
  });

  it('a function with a local_rank parameter uses it; elsewhere LOCAL_RANK from the launcher', async () => {
    const src = [
      'import os',
      'import torch',
      'import torch.distributed as dist',
      '',
      'def setup(local_rank):',
      '    dist.init_process_group("nccl")',
      '',
      'def setup_torchrun():',
      '    dist.init_process_group("nccl")',
      '',
    ].join('\n');
    const r = await analyze(src);
    const edits = r.findings.filter((x) => x.ruleId === 'add.set-device');
    expect(edits).toHaveLength(2); // one per process-group start
    const after = applyEdits(
      src,
      edits.flatMap((f) => f.fix!.edits),
    );
    expect(after).toContain(
      'def setup(local_rank):\n    torch.npu.set_device(local_rank)\n    dist.init_process_group(',
    );
    expect(after).toContain(
      'def setup_torchrun():\n    torch.npu.set_device(int(os.environ.get("LOCAL_RANK", 0)))\n',
    );
  });
});

describe('only code a rule can match is parsed', () => {
  it('a long file: the same findings, and the rewrite parses, with imports in try/except and functions left out', async () => {
    const filler = Array.from(
      { length: 60 },
      (_, i) => `def helper_${i}(x):\n    y = x * ${i}\n    return y + 1\n`,
    ).join('\n');
    const src = [
      'import torch',
      'try:',
      '    import horovod.torch as hvd',
      'except ImportError:',
      '    hvd = None',
      'import numpy as np',
      '',
      filler,
      'def main():',
      '    model = torch.nn.Linear(2, 2).cuda()',
      '    return model',
      '',
      filler.replaceAll('helper_', 'other_'),
    ].join('\n');
    expect(src.length).toBeGreaterThan(2000);
    const r = await analyze(src);
    expect(r.parseErrors).toBe(false);
    expect(r.findings.map((f) => `${f.line}:${f.ruleId}`)).toEqual([
      `${src.split('\n').indexOf('    model = torch.nn.Linear(2, 2).cuda()') + 1}:device.cuda-method`,
    ]);
    // the try statement does not end the import block: the import after it belongs to it
    expect(r.importEnd).toBe(src.indexOf('import numpy as np') + 'import numpy as np'.length);
    const after = applyEdits(
      src,
      r.findings.flatMap((f) => f.fix?.edits ?? []),
    );
    expect(after).toContain('model = torch.nn.Linear(2, 2).npu()');
  });
});

describe('what a scan skips and what it adds', () => {
  it('a binary file is skipped with its reason and its lines are not counted', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'ok.py'), 'import torch\nx = torch.zeros(1).cuda()\n');
    writeFileSync(join(dir, 'blob.py'), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 0, 0x0a, 0x63]));
    writeFileSync(join(dir, 'run.sh'), Buffer.from('CUDA_VISIBLE_DEVICES=0\0\0python ok.py\n'));
    const scan = await scanProject(dir);
    expect(scan.skipped).toEqual([
      { file: 'blob.py', reason: 'not a text file (NUL bytes)' },
      { file: 'run.sh', reason: 'not a text file (NUL bytes)' },
    ]);
    // only ok.py's lines count: the same as a scan of ok.py alone
    const alone = tempDir();
    writeFileSync(join(alone, 'ok.py'), 'import torch\nx = torch.zeros(1).cuda()\n');
    expect(scan.lines).toBe((await scanProject(alone)).lines);
    expect(scan.files).toBe(1);
    expect([...new Set(scan.findings.map((f) => f.file))]).toEqual(['ok.py']);
    const cli = await amw(['scan', dir, '--json']);
    expect(JSON.parse(cli.stdout).skipped).toEqual(scan.skipped);
  });

  it("a JSON config is read for its backend and device; a JSON file of a dataset's size is not", async () => {
    const dir = tempDir();
    const config = '{\n  "dist_backend": "nccl",\n  "device": "cuda"\n}\n';
    writeFileSync(join(dir, 'ds_config.json'), config);
    // the same lines at the head of a 300 KiB file of records
    const records = Array.from(
      { length: 6000 },
      (_, i) => `  {"id": ${i}, "text": "${'x'.repeat(40)}"},`,
    );
    writeFileSync(
      join(dir, 'train.json'),
      `${config.slice(0, -2)},\n  "rows": [\n${records.join('\n')}\n  ]\n}\n`,
    );
    const scan = await scanProject(dir);
    expect(where(scan)).toEqual([
      'ds_config.json:2:script.cuda-env',
      'ds_config.json:3:script.cuda-env',
    ]);
  });

  it('a package folder named dist/ or build/ is scanned; an output folder is not', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'pkg', 'dist'), { recursive: true });
    mkdirSync(join(dir, 'build', 'lib'), { recursive: true });
    writeFileSync(join(dir, 'pkg', 'dist', '__init__.py'), '');
    writeFileSync(join(dir, 'pkg', 'dist', 'utils.py'), 'import torch\ntorch.cuda.synchronize()\n');
    writeFileSync(join(dir, 'build', 'lib', 'copy.py'), 'import torch\ntorch.cuda.synchronize()\n');
    const scan = await scanProject(dir);
    expect([...new Set(scan.findings.map((f) => f.file))]).toEqual(['pkg/dist/utils.py']);
  });

  it('entry points of a project that needs porting import torch_npu, even without CUDA code of their own', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'proj', 'tools'), { recursive: true });
    writeFileSync(join(dir, 'proj', 'model.py'), 'import torch\nx = torch.zeros(1).cuda()\n');
    writeFileSync(
      join(dir, 'proj', 'tools', 'eval.py'),
      'from proj.model import x\n\nif __name__ == "__main__":\n    print(x)\n',
    );
    writeFileSync(join(dir, 'notes.py'), 'if __name__ == "__main__":\n    print(1)\n');
    const scan = await scanProject(dir);
    expect(where(scan).filter((w) => !w.startsWith('proj/model.py'))).toEqual([
      'proj/tools/eval.py:1:add.import-torch-npu',
      'proj/tools/eval.py:1:add.compile-mode',
    ]);
  });

  it("an entry point importing a package that sits beside it (src/ beside tools/) is the project's, one importing only libraries is not", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'src', 'solver'), { recursive: true });
    mkdirSync(join(dir, 'tools'), { recursive: true });
    writeFileSync(
      join(dir, 'src', 'solver', '__init__.py'),
      'import torch\nx = torch.zeros(1).cuda()\n',
    );
    const main =
      'import argparse\n\nfrom src.solver import x\n\nif __name__ == "__main__":\n    print(x)\n';
    writeFileSync(join(dir, 'tools', 'train.py'), main);
    writeFileSync(
      join(dir, 'tools', 'plot.py'),
      'import argparse\n\nfrom matplotlib import pyplot\n\nif __name__ == "__main__":\n    pyplot.show()\n',
    );
    const scan = await scanProject(dir);
    expect(where(scan).filter((w) => w.startsWith('tools/'))).toEqual([
      'tools/train.py:3:add.import-torch-npu',
      'tools/train.py:3:add.compile-mode',
    ]);
  });

  it('a script that reads its arguments at the top level (no __main__ guard) is an entry point too; a module that only defines a parser is not', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'vdvae'), { recursive: true });
    mkdirSync(join(dir, 'scripts'), { recursive: true });
    writeFileSync(
      join(dir, 'vdvae', 'model_utils.py'),
      'import torch\n\ndef load(x):\n    return torch.tensor([x]).cuda()\n',
    );
    const script = [
      'import sys',
      "sys.path.append('vdvae')",
      'import argparse',
      'from model_utils import load',
      '',
      'parser = argparse.ArgumentParser()',
      "parser.add_argument('--sub', default=1)",
      'args = parser.parse_args()',
      'print(load(args.sub))',
      '',
    ].join('\n');
    writeFileSync(join(dir, 'scripts', 'extract.py'), script);
    writeFileSync(
      join(dir, 'vdvae', 'hps.py'),
      'import argparse\n\ndef parse(parser):\n    args = parser.parse_args()\n    return args\n',
    );
    const scan = await scanProject(dir);
    expect(where(scan).filter((w) => !w.startsWith('vdvae/model_utils.py'))).toEqual([
      // after the leading imports (`sys.path.append` ends them), as at any entry point
      'scripts/extract.py:1:add.import-torch-npu',
      'scripts/extract.py:1:add.compile-mode',
    ]);
  });

  it('import torch_npu goes after the plain imports, above trailing blocks of optional ones (apex needs it loaded first)', async () => {
    const dir = tempDir();
    const src = [
      'import os',
      'import torch',
      'from torch import nn',
      'try:',
      '    from apex import amp',
      'except ImportError:',
      '    amp = None',
      'if os.environ.get("WANDB"):',
      '    import wandb',
      '',
      'x = torch.zeros(1).cuda()',
      '',
    ].join('\n');
    writeFileSync(join(dir, 'train.py'), src);
    const scan = await scanProject(dir);
    const imp = find(scan, 'train.py:3:add.import-torch-npu');
    expect(applyEdits(src, imp.fix!.edits)).toContain(
      'from torch import nn\nimport torch_npu\ntry:\n    from apex import amp',
    );
  });
});
