import gc
import json
import os
import re
from typing import Dict, List, Optional

import torch
from tqdm import tqdm

from slora.models.peft.layer_weights.hf_load_utils import load_hf_weights
from slora.models.peft.layer_weights.lora_layer_weight import LoraLayerWeight
from slora.utils.model_load import hf_load_config

# Large adapter sets (hundreds of adapters) are kept in host memory; pinning
# them makes the H2D copies on the prefetch stream truly asynchronous.
PIN_HOST_ADAPTERS = os.environ.get("SLORA_PIN_ADAPTERS", "1") == "1"


def get_lora_config(lora_dir, dummy):
    if dummy:
        return get_lora_config_json(lora_dir), lora_dir
    else:
        lora_dir = re.sub(r"-(\d+)$", "", lora_dir)
        return hf_load_config(lora_dir)


def get_lora_config_json(name):
    if "alpaca-lora-7b" in name:
        config = {"base_model_name_or_path": "decapoda-research/llama-7b-hf",
                  "bias": "none",
                  "enable_lora": None,
                  "fan_in_fan_out": False,
                  "inference_mode": True,
                  "lora_alpha": 16,
                  "lora_dropout": 0.05,
                  "merge_weights": False,
                  "modules_to_save": None,
                  "peft_type": "LORA",
                  "r": 16,
                  "target_modules": ["q_proj", "k_proj", "v_proj", "o_proj"],
                  "task_type": "CAUSAL_LM"}
    elif "bactrian-x-llama-7b-lora" in name:
        config = {"base_model_name_or_path": "decapoda-research/llama-7b-hf",
                  "bias": "none",
                  "fan_in_fan_out": False,
                  "inference_mode": True,
                  "init_lora_weights": True,
                  "lora_alpha": 16,
                  "lora_dropout": 0.05,
                  "modules_to_save": None,
                  "peft_type": "LORA",
                  "r": 64,
                  "target_modules": ["q_proj", "k_proj", "v_proj", "o_proj"],
                  "task_type": "CAUSAL_LM"}
    elif "dummy-lora-7b-rank-" in name:
        config = {"base_model_name_or_path": "huggyllama/llama-7b",
                  "bias": "none",
                  "fan_in_fan_out": False,
                  "inference_mode": True,
                  "init_lora_weights": True,
                  "lora_alpha": int(re.search(r"rank-(\d+)", name).group(1)) * 2,
                  "lora_dropout": 0.05,
                  "modules_to_save": None,
                  "peft_type": "LORA",
                  "r": int(re.search(r"rank-(\d+)", name).group(1)),
                  "target_modules": ["q_proj", "k_proj", "v_proj", "o_proj"],
                  "task_type": "CAUSAL_LM"}
    else:
        raise Exception(f"unrecognized: {name}")
    return config


def _pin_inplace(t: torch.Tensor) -> torch.Tensor:
    """Pin an existing host tensor without copying it (it may be an mmap of a
    safetensors file).  Falls back to a pinned copy for non-contiguous inputs."""
    if not t.is_contiguous():
        return t.contiguous().pin_memory()
    cudart = torch.cuda.cudart()
    nbytes = t.numel() * t.element_size()
    err = cudart.cudaHostRegister(t.data_ptr(), nbytes, 0)
    if err.value != 0:
        return t.pin_memory()
    return t


class LoraTpPartAdapter:

    def __init__(self, tp_rank, world_size, lora_dir, network_config,
                 swap=False, dummy=False, no_lora_swap=False, prefetch_stream=None):
        assert world_size == 1
        self.tp_rank_ = tp_rank
        self.world_size_ = world_size
        self.lora_dir = lora_dir
        self.network_config = network_config

        self.lora_config, lora_dir = get_lora_config(lora_dir, dummy)

        self.r = self.lora_config["r"]
        self.lora_alpha = self.lora_config["lora_alpha"]
        self.scaling = self.lora_alpha / self.r

        self.layers = [
            LoraLayerWeight(i, tp_rank, world_size, self.lora_config, network_config, torch.float16,
                            no_lora_swap=no_lora_swap, prefetch_stream=prefetch_stream)
            for i in range(network_config["num_hidden_layers"])
        ]

        self.prefetch_stream = prefetch_stream

        load_hf_weights("fp16", lora_dir, transformer_layer_list=self.layers,
                        swap=swap, dummy=dummy)
        if PIN_HOST_ADAPTERS and swap:
            for layer in self.layers:
                layer.w_combined_home = _pin_inplace(layer.w_combined_home)

    def is_on_gpu(self):
        return self.layers[0].w_combined is not None

    def load_to_gpu(self, prefetch=False, bmm=False):
        if prefetch:
            with self.prefetch_stream:
                for layer_weight in self.layers:
                    layer_weight.load_to_gpu(bmm=bmm)
        else:
            for layer_weight in self.layers:
                layer_weight.load_to_gpu(bmm=bmm)

    def offload_gpu(self):
        for layer_weight in self.layers:
            layer_weight.offload_gpu()


class LoraLayerWeightHome:
    """Host-side ("home") copy of one layer's LoRA weights in the combined
    ``[4 * r, hidden]`` q/k/v/o layout used by the unified pool."""

    def __init__(self, layer_num, r, hidden_size, dtype=torch.float16):
        self.layer_num = layer_num
        self.r = r
        self.hidden_size = hidden_size
        self.w_combined_home = torch.empty((2, 4 * r, hidden_size), dtype=dtype)
        self.w_combined = None

    def load_to_gpu(self, bmm=False, non_blocking=True):
        if self.w_combined is not None:
            return
        if bmm:
            # PEFT-style layout for torch.bmm: [4, hidden, r] and [4, r, hidden]
            w = self.w_combined_home.cuda(non_blocking=non_blocking)
            self.w_combined = (w[0].view(4, self.r, -1).transpose(1, 2).contiguous(),
                               w[1].view(4, self.r, -1).contiguous())
        else:
            self.w_combined = self.w_combined_home.to("cuda", non_blocking=non_blocking)
        # the copy was issued on the prefetch stream; keep the source alive and
        # make the default stream's allocator aware of the cross-stream use
        if isinstance(self.w_combined, torch.Tensor):
            self.w_combined.record_stream(torch.cuda.current_stream())

    def offload_gpu(self):
        self.w_combined = None

    @staticmethod
    def from_peft_state(state: Dict[str, torch.Tensor], layer_num: int, scaling: float):
        prefix = f"base_model.model.model.layers.{layer_num}.self_attn"
        As, Bs = [], []
        for proj in ("q_proj", "k_proj", "v_proj", "o_proj"):
            a = state[f"{prefix}.{proj}.lora_A.weight"]          # [r, hidden]
            b = state[f"{prefix}.{proj}.lora_B.weight"] * scaling  # [hidden, r]
            As.append(a)
            Bs.append(b.t())
        r, hidden = As[0].shape
        home = LoraLayerWeightHome(layer_num, r, hidden, dtype=As[0].dtype)
        home.w_combined_home[0].copy_(torch.cat(As, dim=0))
        home.w_combined_home[1].copy_(torch.cat(Bs, dim=0))
        return home


def estimate_adapter_bytes(config: dict, num_layers: int, hidden: int, dtype_bytes: int = 2) -> int:
    n_mod = len(config.get("target_modules", [])) or 4
    return 2 * n_mod * config["r"] * hidden * num_layers * dtype_bytes


def report_gpu_adapter_usage(adapters: List[Optional[LoraTpPartAdapter]]):
    on_gpu = [a for a in adapters if a is not None and a.is_on_gpu()]
    gc.collect()
    print(f"{len(on_gpu)}/{len([a for a in adapters if a is not None])} adapters resident on GPU; "
          f"allocated={torch.cuda.memory_allocated() / 2**30:.2f} GiB")
