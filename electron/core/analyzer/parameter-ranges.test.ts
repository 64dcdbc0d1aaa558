// Definitions parsed for their body are parsed without their parameters (parameter-ranges.ts):
// the findings, their edits and where `import torch_npu` goes must stay those of a whole parse —
// for the parameters a rule does read (a default a rule matches, an autograd forward's ctx, the
// rank a process-group edit names), and the cut must really be made where nothing reads them.
import { describe, expect, it } from 'vitest';
import { analyzeSource } from './analyze-file';
import { withoutParameters } from './parameter-ranges';
import { pythonParser } from './python-parser';
import { loadRules } from './rules';
import { sourceTokens } from './source-tokens';

/** Enough plain code that the file is parsed in parts (files < 2 KB are parsed whole). */
const FILLER = Array.from(
  { length: 30 },
  (_, i) => `

def helper_${i}(values, scale=1.0):
    total = 0.0
    for v in values:
        total += v * scale
    return total
`,
).join('');

async function both(src: string) {
  const parser = await pythonParser();
  const rules = loadRules();
  const pick = (r: ReturnType<typeof analyzeSource>) => ({
    importEnd: r.importEnd,
    findings: r.findings.map((f) => ({
      at: `${f.line}:${f.column}-${f.endLine}:${f.endColumn}`,
      rule: f.ruleId,
      edits: f.fix?.edits,
    })),
  });
  return {
    narrowed: pick(analyzeSource(parser, src, 'x.py', rules, 'en')),
    whole: pick(analyzeSource(parser, src, 'x.py', rules, 'en', true)),
  };
}

describe('definitions parsed without their parameters', () => {
  it('find what a whole parse finds where a rule reads the parameters', async () => {
    const cases = [
      // a default a rule matches
      `import torch\n${FILLER}\ndef run(model, device=torch.cuda.current_device(), scale: float = 1.0):\n    return model.cuda()\n`,
      // an autograd forward: where ctx.device goes
      `import torch\nfrom . import _C\n${FILLER}\nclass RoIAlign(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, features, rois, out_size, spatial_scale, sample_num=0):\n        ctx.out_size = out_size\n        return _C.roi_align_forward(features, rois)\n`,
      // an autograd forward whose parameter list starts with a comment
      `import torch\nfrom . import _C\n${FILLER}\nclass RoIPool(torch.autograd.Function):\n    @staticmethod\n    def forward(  # type: ignore[override]\n        ctx, features, rois, out_size, spatial_scale\n    ):\n        ctx.out_size = out_size\n        return _C.roi_pool_forward(features, rois)\n`,
      // a spawned function whose first parameter is the rank
      `import torch\nimport torch.distributed as dist\nimport torch.multiprocessing as mp\n${FILLER}\ndef worker(rank, world_size, backend_name="nccl", verbose=False):\n    dist.init_process_group("nccl", rank=rank, world_size=world_size)\n    model = Net().cuda()\n\nif __name__ == "__main__":\n    mp.spawn(worker, args=(2,), nprocs=2)\n`,
      // annotations and a multi-line list with strings and comments in it
      `import torch\n${FILLER}\ndef train(\n    model: "nn.Module",  # the model (x)\n    loader=None,\n    note: str = ")(",\n) -> None:\n    model.cuda()\n`,
    ];
    for (const src of cases) {
      const { narrowed, whole } = await both(src);
      expect(narrowed, src.slice(-200)).toEqual(whole);
      expect(whole.findings.length, src.slice(-200)).toBeGreaterThan(0);
    }
  });

  it('cut the parameters no rule reads, and only those', () => {
    const src = `import torch\n${FILLER}\ndef train(model, loader, optimizer, epochs=10, log_every=50):\n    model.cuda()\n\ndef keep(device=torch.cuda.current_device(), other_argument=1):\n    return device\n`;
    const t = sourceTokens(src);
    const range = {
      startIndex: 0,
      endIndex: src.length,
      startPosition: { row: 0, column: 0 },
      endPosition: { row: 0, column: 0 },
    };
    const cut = src.indexOf('model, loader');
    const kept = src.indexOf('torch.cuda.current_device');
    const ranges = withoutParameters(src, t, [range], [src.indexOf('.cuda()'), kept]);
    const parsed = (at: number) => ranges.some((r) => r.startIndex <= at && at < r.endIndex);
    expect(parsed(cut)).toBe(false);
    expect(parsed(src.indexOf('def train'))).toBe(true);
    expect(parsed(kept)).toBe(true);
    // a file that starts a process group keeps every parameter list
    const dist = `${src}\ntorch.distributed.init_process_group("nccl")\n`;
    expect(withoutParameters(dist, sourceTokens(dist), [range], [])).toEqual([range]);
  });
});
