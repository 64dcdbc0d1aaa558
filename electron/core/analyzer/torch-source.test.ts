// The other side of recall: PyTorch's own source (Debian's python3-torch, which CI installs for the
// simulated hosts) is full of names shaped like what the scanner looks for — `from torch import _C`,
// `getattr(torch.ops.aten, …)`, `ord == float("inf")` — that are no CUDA construct.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scanProject } from './scan';

const TORCH = '/usr/lib/python3/dist-packages/torch';

describe.runIf(existsSync(TORCH))("torch's own source", () => {
  it('its bindings, built-in operator namespaces and norm orders are no finding', async () => {
    const scans = await Promise.all(
      ['onnx', '_refs', '_decomp', 'ao', 'masked'].map((dir) => scanProject(join(TORCH, dir))),
    );
    expect(scans.reduce((n, s) => n + s.files, 0)).toBeGreaterThan(50);
    const found = (id: string) => scans.flatMap((s) => s.findings.filter((f) => f.ruleId === id));
    expect(found('ext.extension-call')).toEqual([]);
    expect(found('ext.torch-ops').map((f) => f.message)).not.toContainEqual(
      expect.stringMatching(/^torch\.ops\.(aten|prims?|quantized|sparse)\b/),
    );
    expect(found('amp.overflow-check')).toEqual([]);
  }, 120_000);
});
