// Only the code a rule can match is parsed (relevant.ts, source-tokens.ts): the findings must be
// exactly those of parsing the whole file. Checked on every real sample here (and on the real
// ports of ../shared/corpus-dev where that folder exists), and on the constructs the narrowing
// reasons about: comments and docstrings, f-strings, `else: raise`, decorated classes, a reported
// definition, an autograd Function.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { analyzeSource } from './analyze-file';
import { rangedInput } from './relevant';
import { pythonParser } from './python-parser';
import { loadRules } from './rules';
import { realPythonFiles } from '../../../tests/support/python-samples';

async function both(src: string, file = 'x.py', rules = loadRules()) {
  const parser = await pythonParser();
  return {
    narrowed: analyzeSource(parser, src, file, rules, 'en'),
    whole: analyzeSource(parser, src, file, rules, 'en', true),
  };
}

/** Enough plain code around a snippet that the file is parsed in parts (files < 2 KB are whole). */
const FILLER = Array.from(
  { length: 12 },
  (_, i) => `

def helper_${i}(values, scale=1.0):
    """Scales the values; runs on whatever device they are on."""
    total = 0.0
    for v in values:
        total += v * scale
    return total
`,
).join('');

const at = (r: { findings: { ruleId: string; line: number; endLine: number }[] }) =>
  r.findings.map((f) => `${f.line}-${f.endLine}:${f.ruleId}`);

describe('partial parsing finds what a whole parse finds', () => {
  it('on every real sample file (and the development corpus when present)', async () => {
    const files = realPythonFiles();
    expect(files.length).toBeGreaterThan(20);
    const differ: string[] = [];
    let narrowedSomewhere = false;
    for (const f of files) {
      const src = readFileSync(f, 'utf8');
      const { narrowed, whole } = await both(src, f);
      if (JSON.stringify(narrowed) !== JSON.stringify(whole)) differ.push(f);
      narrowedSomewhere ||= src.length >= 2000;
    }
    expect(narrowedSomewhere).toBe(true);
    expect(differ).toEqual([]);
  }, 300_000);

  it('a device call named only in comments and docstrings is no finding; one inside an f-string is', async () => {
    const src = `import torch
${FILLER}

def describe(model):
    """Moves the model with model.cuda() and runs inference on "cuda:0"."""
    # model.cuda() would be wrong here
    return f"on {model.cuda().device}"
`;
    const { narrowed, whole } = await both(src);
    expect(at(narrowed)).toEqual(at(whole));
    expect(narrowed.findings.map((f) => f.ruleId)).toContain('device.cuda-method');
    expect(narrowed.findings.filter((f) => f.ruleId === 'device.cuda-method')).toHaveLength(1);
  });

  it('the mask a softmax reads from the statements above is kept, and a new value written over with pass still ends it', async () => {
    const src = `import torch
${FILLER}

def attend(w, mask, v):
    if mask is not None:
        w = w + mask
        w = w.float()
    return torch.softmax(w, -1) @ v


def fresh(w, mask, v):
    w = w + mask
    w = v.new_zeros(v.shape)
    return torch.softmax(w, -1)
`;
    const { narrowed, whole } = await both(src);
    expect(at(narrowed)).toEqual(at(whole));
    const softmax = (r: typeof narrowed) =>
      r.findings.filter((f) => f.ruleId === 'attn.masked-softmax').map((f) => f.line);
    const line = src.split('\n').indexOf('    return torch.softmax(w, -1) @ v') + 1;
    expect(softmax(narrowed)).toEqual([line]);
  });

  it('imports inside functions bind as a whole parse says: read from text, or parsed where optional matters', async () => {
    const src = `import torch
${FILLER}

def nms(boxes, scores):
    from . import _C
    from .utils import as_float
    return _C.nms(as_float(boxes), scores)


def call_fastlib(x):
    try:
        import fastlib
    except ImportError:
        return x
    return fastlib.kernels.fused(x)
`;
    // a library only a use rule knows (no import rule names it): whether its import inside a
    // function is optional decides whether its uses are findings
    const rules = loadRules();
    const uses = rules.find((r) => r.uses && r.match.kind === 'reference')!;
    const withLib = [
      ...rules,
      { ...uses, id: 'lib.fastlib-call', match: { ...uses.match, names: ['fastlib.*'] } },
    ] as typeof rules;
    const optional = await both(src, 'x.py', withLib);
    const required = await both(
      src.replace('    except ImportError:', '    finally:'),
      'x.py',
      withLib,
    );
    for (const r of [optional, required]) expect(at(r.narrowed)).toEqual(at(r.whole));
    // the extension bound inside the function: its call is found
    expect(at(optional.narrowed)).toContain('103-103:ext.extension-call');
    expect(at(optional.narrowed).some((f) => f.endsWith('lib.fastlib-call'))).toBe(false);
    expect(at(required.narrowed).some((f) => f.endsWith('lib.fastlib-call'))).toBe(true);
  });

  it('an extension built by a loader is bound however cpp_extension is imported; torch.load binds nothing', async () => {
    const body = (load: string) => `import torch
${load}
${FILLER}

def build():
    state = torch.load("ckpt.pt")
    ops = LOADER(name="ops", sources=["ops.cpp", "ops_kernel.cu"])
    return ops.fused_forward(state["x"]), state.keys()
`;
    const forms = [
      ['from torch.utils.cpp_extension import load', 'load'],
      ['from torch.utils import cpp_extension', 'cpp_extension.load'],
      ['import torch.utils.cpp_extension as ce', 'ce.load'],
      ['', 'torch.utils.cpp_extension.load'],
      // one loader under another's name
      ['from mmcv.utils import load_ext as load', 'load'],
    ] as const;
    for (const [imp, call] of forms) {
      const src = body(imp).replace('LOADER', call);
      const { narrowed, whole } = await both(src);
      expect(at(narrowed), call).toEqual(at(whole));
      // the op called on the built module is the extension's; the checkpoint's keys are not
      expect(
        narrowed.findings.filter((f) => f.ruleId === 'ext.extension-call').map((f) => f.line),
        call,
      ).toEqual([104]);
    }
    // json.load / torch.load named like a loader bind nothing
    const plain = body('import json').replace('LOADER', 'json.load');
    const { narrowed, whole } = await both(plain);
    expect(at(narrowed)).toEqual(at(whole));
    expect(narrowed.findings.some((f) => f.ruleId === 'ext.extension-call')).toBe(false);
  });

  it('an extension loaded with its parenthesis after a backslash, and called under another name', async () => {
    const src = `import torch
from torch.utils.cpp_extension import load
${FILLER}

kernels = load \\
(
    name="q_kernels",
    sources=["q_gemm.cu"],
)
ext_c = kernels  # the module under a shorter name

def gemm(a, b):
    return ext_c.gemm_half(a, b)
`;
    const { narrowed, whole } = await both(src);
    expect(at(narrowed)).toEqual(at(whole));
    const lines = src.split('\n');
    const calls = narrowed.findings.filter((f) => f.ruleId === 'ext.extension-call');
    expect(calls.map((f) => lines[f.line - 1])).toEqual(['    return ext_c.gemm_half(a, b)']);
  });

  it('`else: raise` after an import in a function makes the library required, elsewhere a raise is not read', async () => {
    const required = `import torch
${FILLER}

def load_apex():
    if is_apex_available():
        from apex import amp
    else:
        raise ImportError("apex is needed for --fp16")
    return amp


def check(x):
    if x is None:
        raise ValueError("x")
`;
    const optional = required.replace(
      '    else:\n        raise ImportError("apex is needed for --fp16")\n',
      '',
    );
    const r = await both(required);
    const o = await both(optional);
    expect(at(r.narrowed)).toEqual(at(r.whole));
    expect(at(o.narrowed)).toEqual(at(o.whole));
    // required: the apex import is a finding; optional (no else: raise): it is not
    expect(at(r.narrowed).some((f) => f.endsWith('amp.apex'))).toBe(true);
    expect(at(o.narrowed).some((f) => f.endsWith('amp.apex'))).toBe(false);
  });

  it('a module-level `try: import` whose handler only raises is required; the same under `if args.fp16:` or with a fallback is not', async () => {
    const required = `import torch

try:
    from apex import amp
except ImportError:
    raise ImportError("Please install apex to run this example.")
${FILLER}

def train(model, opt, args):
    if args.fp16:
        try:
            import bitsandbytes as bnb
        except ImportError:
            raise ImportError("pip install bitsandbytes")
    return amp.initialize(model, opt)
`;
    const fallback = required.replace(
      '    raise ImportError("Please install apex to run this example.")',
      '    amp = None',
    );
    const r = await both(required);
    const f = await both(fallback);
    expect(at(r.narrowed)).toEqual(at(r.whole));
    expect(at(f.narrowed)).toEqual(at(f.whole));
    const use = required.split('\n').indexOf('    return amp.initialize(model, opt)') + 1;
    // the apex import and its use; bitsandbytes behind the flag is no finding
    expect(at(r.whole).filter((x) => /amp\.apex|lib\.apex-call|bitsandbytes/.test(x))).toEqual([
      '4-4:amp.apex',
      `${use}-${use}:lib.apex-call`,
    ]);
    expect(at(f.whole).some((x) => x.endsWith('amp.apex'))).toBe(false);
  });
  it('a decorated class is looked into, and a reported definition spans its whole body', async () => {
    const src = `import torch
${FILLER}

@register("model")
class Model(torch.nn.Module):
    def enable_xformers_memory_efficient_attention(self, op=None):
        self.use_xformers = True
        self.op = op

    def forward(self, x):
        return x.cuda()
`;
    const { narrowed, whole } = await both(src);
    expect(at(narrowed)).toEqual(at(whole));
    const def = narrowed.findings.find((f) => f.category === 'attention')!;
    expect(def.endLine - def.line).toBe(2);
  });

  it("an autograd Function's forward is read whole when only its backward calls the extension", async () => {
    const src = `import torch
from . import _C
${FILLER}

class RoIAlignFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, rois):
        ctx.save_for_backward(rois)
        ctx.spatial_scale = 1.0
        return input.new_zeros(rois.size(0))

    @staticmethod
    def backward(ctx, grad_output):
        (rois,) = ctx.saved_tensors
        return _C.roi_align_backward(grad_output, rois), None
`;
    const { narrowed, whole } = await both(src);
    expect(at(narrowed)).toEqual(at(whole));
    expect(narrowed.findings.length).toBeGreaterThan(1);
  });

  it('calls, methods and keyword arguments are found as a whole parse finds them, however written, where the text decides what is parsed (call-needs)', async () => {
    const src = `import numpy as np
import torch
import torch as th
import torch.nn.functional as F
from torch.utils.data import DataLoader
${FILLER}

def ops(x, y, cond, n, scores, mask):
    a = torch.where(cond, x, y)
    b = th.max(x, torch.tensor(0.0))
    c = torch.min(
        x,
        torch.tensor(1.0),
    )
    d = torch.full((n, n), float("-inf"))
    e = torch.full((n, n), 0.0)
    f = torch.full((n, n), -1)
    g = scores.masked_fill(mask, float("-inf"))
    h = scores.masked_fill_(mask, 0)
    i = x.double()
    j = np.double(3)
    k = torch.where(cond, x, "torch.tensor(")
    return a, b, c, d, e, f, g, h, i, j, k


class MLP(torch.nn.Module):
    def forward(self, gate, up):
        h = self.silu(gate) * up
        k = up * (self.gelu(gate))
        m = self.silu(gate) ** 2
        n = self.linear(self.silu(gate))
        o = up * \\
            self.silu(gate)
        p = (up *  # the gate
             self.silu(gate))
        self.silu = torch.nn.SiLU()
        q = F.silu(gate) * up
        return h + k + m + n + o + p + q


def attend(q, k, v, mask):
    s = q @ k
    p = torch.softmax(s, dim=-1)
    w = q @ k + mask
    o = torch.softmax(w, dim=-1)
    z = s
    z += mask
    r = z.softmax(-1)
    return p @ v, o, r


async def attend_async(q, k, mask):
    w = q @ k
    w = w + mask

    def unrelated():
        return 1

    return F.softmax(w.float(), dim=-1), F.log_softmax(q @ k + mask, -1)


def data(ds, args, x):
    a = DataLoader(ds, pin_memory=True)
    b = DataLoader(ds, pin_memory=args.pin_mem)
    c = DataLoader(ds, pin_memory=
                   True)
    d = DataLoader(ds, pin_memory=  # pinned
                   True)
    e = DataLoader(ds, pin_memory=Truer)
    v, i = torch.topk(x, 3, largest=False)
    w, j = torch.topk(x, 3, largest=True)
    if largest == False:
        pass
    with torch.autocast("cuda"):
        pass
    with torch.autocast(device_type="cuda", dtype=torch.float16):
        pass
    with torch.autocast("npu"):
        pass
    return a, b, c, d, e, v, w
`;
    const { narrowed, whole } = await both(src);
    expect(at(narrowed)).toEqual(at(whole));
    const lineOf = (text: string) => src.split('\n').findIndex((l) => l.includes(text)) + 1;
    /** The rules found on the line that holds `text` (or `below` lines under it). */
    const rulesAt = (text: string, below = 0) =>
      narrowed.findings.filter((f) => f.line === lineOf(text) + below).map((f) => f.ruleId);
    // taken: an argument, a value, a product or a device string where the rule needs it
    expect(rulesAt('b = th.max(x, torch.tensor(0.0))')).toContain('op.cpu-scalar-tensor');
    expect(rulesAt('c = torch.min(')).toContain('op.cpu-scalar-tensor');
    expect(rulesAt('d = torch.full((n, n), float("-inf"))')).toContain('attn.inf-mask');
    expect(rulesAt('g = scores.masked_fill(mask, float("-inf"))')).toContain(
      'attn.masked-fill-inf',
    );
    expect(rulesAt('i = x.double()')).toContain('op.float64-method');
    expect(rulesAt('h = self.silu(gate) * up')).toContain('fused.gated-silu');
    expect(rulesAt('k = up * (self.gelu(gate))')).toContain('fused.gated-gelu');
    expect(rulesAt('o = up * \\', 1)).toContain('fused.gated-silu');
    expect(rulesAt('p = (up *  # the gate', 1)).toContain('fused.gated-silu');
    expect(rulesAt('v, i = torch.topk(x, 3, largest=False)')).toContain('op.topk-smallest');
    expect(rulesAt('o = torch.softmax(w, dim=-1)')).toContain('attn.masked-softmax');
    expect(rulesAt('r = z.softmax(-1)')).toContain('attn.masked-softmax-method');
    expect(rulesAt('return F.softmax(w.float(), dim=-1), F.log_softmax')).toEqual([
      'attn.masked-softmax',
    ]);
    expect(rulesAt('with torch.autocast("cuda"):')).toContain('amp.autocast-cuda');
    expect(rulesAt('with torch.autocast(device_type="cuda"')).toContain('amp.autocast-cuda');
    // a value on the next line, after a comment or not, is the keyword's
    const pinned = narrowed.findings.filter((f) => f.ruleId === 'perf.pin-memory');
    expect(pinned.length).toBe(1);
    expect(pinned[0]!.message).toContain('(3 in this file)');
    // not taken: no rule's as written
    for (const quiet of [
      'a = torch.where(cond, x, y)',
      'p = torch.softmax(s, dim=-1)',
      'e = torch.full((n, n), 0.0)',
      'f = torch.full((n, n), -1)',
      'h = scores.masked_fill_(mask, 0)',
      'j = np.double(3)',
      'k = torch.where(cond, x, "torch.tensor(")',
      'm = self.silu(gate) ** 2',
      'n = self.linear(self.silu(gate))',
      'self.silu = torch.nn.SiLU()',
      'b = DataLoader(ds, pin_memory=args.pin_mem)',
      'e = DataLoader(ds, pin_memory=Truer)',
      'w, j = torch.topk(x, 3, largest=True)',
      'if largest == False:',
      'with torch.autocast("npu"):',
    ])
      expect(rulesAt(quiet), quiet).toEqual([]);
  });
});

describe("the parser's input in ranges", () => {
  // `xx = 1` at 0 and `yy = 2` at 7 left out (`pass` written over their first four characters),
  // `zz = 3` at 14 parsed: the ranges end just past each `pass`
  const text = 'xx = 1\nyy = 2\nzz = 3\n';
  const ranges = [
    {
      startIndex: 0,
      endIndex: 4,
      startPosition: { row: 0, column: 0 },
      endPosition: { row: 0, column: 4 },
    },
    {
      startIndex: 13,
      endIndex: 21,
      startPosition: { row: 1, column: 6 },
      endPosition: { row: 3, column: 0 },
    },
  ];
  const read = rangedInput(text, ranges, [0, 7]);

  it('reads up to the end of the range it starts in, with each `pass` written over the source', () => {
    expect(read(0)).toBe('pass');
    expect(read(2)).toBe('ss');
    expect(read(13)).toBe('\nzz = 3\n');
  });

  it('reads between ranges (a node that spans them) as the text with every `pass` in it', () => {
    expect(read(4)).toBe(' 1\npass 2\nzz = 3\n');
    expect(read(6)).toBe('\npass 2\nzz = 3\n');
    expect(read(9)).toBe('ss 2\nzz = 3\n');
  });
});
