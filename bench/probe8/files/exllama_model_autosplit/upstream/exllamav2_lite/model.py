"""Minimal ExLlamaV2-style model: GPTQ/EXL2 quantised linears through the C++/CUDA extension,
layer-wise auto-split across all visible GPUs, per-device scratch buffers and streams.

The embedding table stays in system RAM (it is large and only gathered from), hidden states
are moved from device to device as the forward pass walks the layer list.
"""
import gc
import math
import os
from typing import Callable, Dict, List, Optional

import torch
import torch.nn.functional as F

from exllamav2_lite.config import ExLlamaV2Config
from exllamav2_lite.ext import exllamav2_ext as ext_c, none_tensor
from exllamav2_lite.fasttensors import STFile


def _torch_device(idx: int) -> str:
    if idx == -1:
        return "cpu"
    return f"cuda:{idx}"


class DeviceContext:
    """Scratch space and a dedicated stream per device."""

    def __init__(self, device_idx: int, scratch_bytes: int):
        self.device_idx = device_idx
        self.device = _torch_device(device_idx)
        self.scratch = torch.empty((scratch_bytes // 2,), dtype=torch.half, device=self.device)
        self.stream = torch.cuda.Stream(self.device)
        self._offset = 0

    def get_scratch_slice(self, numel: int) -> torch.Tensor:
        s = self.scratch[self._offset:self._offset + numel]
        self._offset += numel
        return s

    def reset(self):
        self._offset = 0


class RMSNorm:
    def __init__(self, key: str, eps: float):
        self.key = key
        self.variance_epsilon = eps
        self.weight = None
        self.device_idx = -1

    def load(self, tensors: Dict[str, torch.Tensor], device_idx: int):
        self.device_idx = device_idx
        self.weight = tensors[self.key + ".weight"].half().to(_torch_device(device_idx))

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        output_shape = hidden_states.shape
        hidden_states = hidden_states.view(-1, hidden_states.shape[-1])
        norm = torch.empty_like(hidden_states)
        ext_c.rms_norm(hidden_states, self.weight, norm, self.variance_epsilon)
        return norm.view(output_shape)

    def forward_torch(self, hidden_states: torch.Tensor) -> torch.Tensor:
        variance = hidden_states.float().pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return (hidden_states * self.weight).half()

    def footprint(self) -> int:
        return self.weight.numel() * 2 if self.weight is not None else 0


class QLinear:
    """GPTQ / EXL2 linear: q_weight, q_scale, q_groups (+ optional act-order permutation)."""

    def __init__(self, key: str, in_features: int, out_features: int):
        self.key = key
        self.in_features = in_features
        self.out_features = out_features
        self.q_handle = None
        self.q_tensors = None
        self.device_idx = -1

    def load(self, tensors: Dict[str, torch.Tensor], ctx: DeviceContext, temp_dq: torch.Tensor):
        self.device_idx = ctx.device_idx
        keys = ("q_weight", "q_invperm", "q_scale", "q_scale_max", "q_groups", "q_group_map")
        self.q_tensors = {k: tensors[f"{self.key}.{k}"].to(ctx.device) for k in keys if f"{self.key}.{k}" in tensors}
        if "q_invperm" in self.q_tensors:
            self.q_tensors["q_perm"] = torch.argsort(self.q_tensors["q_invperm"]).to(torch.int)
        self.q_handle = ext_c.make_q_matrix(
            self.q_tensors["q_weight"],
            self.q_tensors.get("q_perm", none_tensor),
            self.q_tensors.get("q_invperm", none_tensor),
            self.q_tensors["q_scale"],
            self.q_tensors["q_scale_max"],
            self.q_tensors["q_groups"],
            self.q_tensors.get("q_group_map", none_tensor),
            none_tensor,
            none_tensor,
            none_tensor,
            temp_dq,
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty(x.shape[:-1] + (self.out_features,), dtype=torch.half, device=x.device)
        ext_c.gemm_half_q_half(x.view(-1, x.shape[-1]), self.q_handle, out.view(-1, self.out_features), False)
        return out

    def footprint(self) -> int:
        return sum(t.numel() * t.element_size() for t in self.q_tensors.values()) if self.q_tensors else \
            self.in_features * self.out_features // 2


class ExLlamaV2:
    def __init__(self, config: ExLlamaV2Config):
        self.config = config
        self.modules: List[object] = []
        self.device_contexts: Dict[int, DeviceContext] = {}
        self.embed_tokens: Optional[torch.Tensor] = None
        self.loaded = False

    # ----------------------------------------------------------------- loading
    def _read_tensors(self) -> Dict[str, torch.Tensor]:
        tensors = {}
        for path in self.config.tensor_files:
            with STFile(path) as f:
                tensors.update(f.get_all(device="cpu"))
        return tensors

    def _free_memory(self, reserve: List[int]) -> List[int]:
        free = []
        for i in range(torch.cuda.device_count()):
            torch.cuda.set_device(i)
            f, _total = torch.cuda.mem_get_info(i)
            free.append(max(f - reserve[i], 0))
        return free

    def load_autosplit(self, reserve_vram: Optional[List[int]] = None,
                       callback: Optional[Callable[[int, int], None]] = None):
        n_dev = torch.cuda.device_count()
        if n_dev == 0:
            raise RuntimeError("ExLlamaV2 needs at least one CUDA device")
        reserve = reserve_vram or [256 * 1024 ** 2] + [96 * 1024 ** 2] * (n_dev - 1)
        free = self._free_memory(reserve)
        total_mem = [torch.cuda.get_device_properties(i).total_memory for i in range(n_dev)]
        scratch = self.config.max_input_len * self.config.hidden_size * 2 * 8
        tensors = self._read_tensors()
        self.embed_tokens = tensors["model.embed_tokens.weight"].half()  # stays on CPU

        layers = []
        for i in range(self.config.num_hidden_layers):
            p = f"model.layers.{i}"
            layers.append(RMSNorm(p + ".input_layernorm", self.config.rms_norm_eps))
            for name, (fin, fout) in self.config.linear_shapes(i).items():
                layers.append(QLinear(f"{p}.{name}", fin, fout))
            layers.append(RMSNorm(p + ".post_attention_layernorm", self.config.rms_norm_eps))
        layers.append(RMSNorm("model.norm", self.config.rms_norm_eps))
        layers.append(QLinear("lm_head", self.config.hidden_size, self.config.vocab_size))

        dev = 0
        used = scratch
        temp_dq = {}
        for n, module in enumerate(layers):
            need = module.footprint() if isinstance(module, RMSNorm) else module.in_features * module.out_features // 2
            while used + need > free[dev]:
                dev += 1
                used = scratch
                if dev >= n_dev:
                    raise RuntimeError(f"model does not fit in {n_dev} GPUs ({[m // 2**20 for m in total_mem]} MiB)")
            if dev not in self.device_contexts:
                self.device_contexts[dev] = DeviceContext(dev, scratch)
                temp_dq[dev] = torch.empty((self.config.max_dq_size,), dtype=torch.half, device=_torch_device(dev))
            ctx = self.device_contexts[dev]
            if isinstance(module, RMSNorm):
                module.load(tensors, dev)
            else:
                module.load(tensors, ctx, temp_dq[dev])
            used += need
            if callback:
                callback(n + 1, len(layers))
        self.modules = layers
        del tensors
        gc.collect()
        torch.cuda.empty_cache()
        self.loaded = True

    # ----------------------------------------------------------------- forward
    @torch.inference_mode()
    def forward_hidden(self, input_ids: torch.Tensor) -> torch.Tensor:
        x = F.embedding(input_ids.cpu(), self.embed_tokens)
        last_dev = -1
        for module in self.modules:
            if module.device_idx != last_dev:
                if last_dev != -1:
                    torch.cuda.synchronize(_torch_device(last_dev))
                x = x.to(_torch_device(module.device_idx), non_blocking=True)
                last_dev = module.device_idx
            x = module.forward(x) if isinstance(module, (RMSNorm, QLinear)) else x
        return x

    def unload(self):
        for module in self.modules:
            module.q_tensors = None if isinstance(module, QLinear) else getattr(module, "q_tensors", None)
        self.device_contexts.clear()
        self.modules = []
        gc.collect()
        torch.cuda.empty_cache()  # give VRAM back to other processes
        self.loaded = False
