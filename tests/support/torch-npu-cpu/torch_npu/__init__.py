# torch_npu CPU STAND-IN: a test double, because no NPU (and no real torch_npu) exists where the
# tests run. It provides the API surface that migrated code calls — torch.npu with
# is_available() == False, so the code takes its CPU branch — and nothing else. The analyzer
# tests run the rewritten fixtures against it to prove they import, parse and still work.
import types

import torch

__version__ = "0.0.0+cpu-standin"


def _noop(*args, **kwargs):
    return None


npu = types.ModuleType("torch_npu.npu")
npu.is_available = lambda: False
npu.device_count = lambda: 0
npu.set_device = _noop
npu.synchronize = _noop
npu.empty_cache = _noop
npu.manual_seed = _noop
npu.manual_seed_all = _noop
npu.memory_allocated = lambda *a, **k: 0
npu.max_memory_allocated = lambda *a, **k: 0
npu.current_device = lambda: 0
npu.is_bf16_supported = lambda: False
npu.set_compile_mode = _noop
npu.amp = torch.cuda.amp  # GradScaler(enabled=False) and autocast work on a CPU in torch 1.13

torch.npu = npu
torch.Tensor.npu = lambda self, *a, **k: self
torch.Tensor.is_npu = property(lambda self: False)
torch.nn.Module.npu = lambda self, *a, **k: self
