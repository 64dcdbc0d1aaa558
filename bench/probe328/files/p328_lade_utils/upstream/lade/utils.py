import inspect
import json
import os
import time

import torch
import torch.distributed as dist
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer, GenerationMixin
from transformers.models.llama import modeling_llama

from lade.decoding import CONFIG_MAP, FUNC_MAP, greedy_search_proxy
from lade.models import modeling_llama as lade_modeling_llama

try:
    # Only the FlashAttention-2 varlen/kvcache entry points are used; the lookahead
    # mask is folded into the window ordering (see models/modeling_llama.py).
    import flash_attn  # noqa: F401

    HAS_FLASH = True
except ImportError:
    HAS_FLASH = False


def config_lade(
    WINDOW_SIZE=None,
    LEVEL=None,
    DEBUG=None,
    GUESS_SET_SIZE=None,
    ALWAYS_FWD_ONE=None,
    SPLIT_FLAG=None,
    DIST_WORKERS=None,
    POOL_FROM_PROMPT=None,
    backend="nccl",
    USE_FLASH=None,
):
    if WINDOW_SIZE is not None:
        CONFIG_MAP["WINDOW_SIZE"] = WINDOW_SIZE
    if LEVEL is not None:
        CONFIG_MAP["LEVEL"] = LEVEL
    if GUESS_SET_SIZE is not None:
        CONFIG_MAP["GUESS_SET_SIZE"] = GUESS_SET_SIZE
    if ALWAYS_FWD_ONE is not None:
        CONFIG_MAP["ALWAYS_FWD_ONE"] = ALWAYS_FWD_ONE
    if DEBUG is not None:
        CONFIG_MAP["DEBUG"] = DEBUG
    if SPLIT_FLAG is not None:
        CONFIG_MAP["SPLIT_FLAG"] = SPLIT_FLAG
    if POOL_FROM_PROMPT is not None:
        CONFIG_MAP["POOL_FROM_PROMPT"] = POOL_FROM_PROMPT
    if DIST_WORKERS is not None and DIST_WORKERS > 1:
        CONFIG_MAP["DIST_WORKERS"] = DIST_WORKERS
        CONFIG_MAP["LOCAL_RANK"] = int(os.environ["LOCAL_RANK"])
        dist.init_process_group(backend, rank=CONFIG_MAP["LOCAL_RANK"])
        torch.cuda.set_device(CONFIG_MAP["LOCAL_RANK"])
        dist.barrier()
        assert dist.get_world_size() == DIST_WORKERS, "DIST_WORKERS config should be equal to work size"
    if USE_FLASH is not None:
        if USE_FLASH and not HAS_FLASH:
            print("[lade] flash-attn not importable, falling back to the eager lookahead attention")
        CONFIG_MAP["USE_FLASH"] = int(bool(USE_FLASH) and HAS_FLASH)
    # load balance / logging
    CONFIG_MAP["log"] = []


def inject_module(lade_module, original_module):
    s = {}
    for name, cls in inspect.getmembers(original_module, inspect.isclass):
        s[name] = cls
    for name, cls in inspect.getmembers(lade_module, inspect.isclass):
        if str(cls.__module__).startswith("lade") and name in s:
            tc = s[name]
            for method_name in dir(cls):
                if callable(getattr(cls, method_name)):
                    try:
                        setattr(tc, method_name, getattr(cls, method_name))
                    except Exception:
                        pass


def augment_llama():
    inject_module(lade_modeling_llama, modeling_llama)
    # llama.modeling_llama.LlamaForCausalLM = lade_modeling_llama.LlamaForCausalLM
    # modeling_llama.LlamaForCausalLM.jforward_multilevel = lookahead_llama.jforward_multilevel
    # modeling_llama.LlamaModel.LlamaModeljforward = lookahead_llama.LlamaModeljforward
    # modeling_llama.LlamaModel.j_prepare_decoder_attention_mask = lookahead_llama.j_prepare_decoder_attention_mask


def augment_generate():
    FUNC_MAP["greedy_search"] = GenerationMixin.greedy_search
    GenerationMixin.greedy_search = greedy_search_proxy


def augment_all():
    augment_llama()
    augment_generate()


def log_history(clear=False):
    gen = 0
    step = 0
    if "log" in CONFIG_MAP:
        for log in CONFIG_MAP["log"]:
            gen += log[0]
            step += log[1]
        if clear:
            CONFIG_MAP["log"] = []
    print("LADE LOG - OVERALL GEN: ", gen, " STEPS: ", step, " AVG COMPRESS RATIO: ", (gen / step) if step > 0 else 0)


def save_log(log_dir):
    if "log" in CONFIG_MAP:
        with open(log_dir, "w") as f:
            json.dump(CONFIG_MAP["log"], f)


def get_device(local_rank=0):
    """Device for this rank; single-GPU runs use cuda:0."""
    if torch.cuda.is_available():
        return torch.device(f"cuda:{local_rank}")
    return torch.device("cpu")


def get_hf_model(model_path, quant, dtype, device, cache_dir):
    tokenizer = AutoTokenizer.from_pretrained(model_path)
    model_config = AutoConfig.from_pretrained(model_path)
    assert quant is None or len(quant) == 0

    model = AutoModelForCausalLM.from_pretrained(
        model_path,
        torch_dtype=dtype,
        device_map=device,
        cache_dir=cache_dir if len(cache_dir) > 0 else None,
    )
    model = model.eval()
    model.tokenizer = tokenizer

    return model, tokenizer


def get_ds_model(model_path, dtype, cache_dir, native_offload=False):
    import deepspeed
    from transformers.integrations.deepspeed import HfDeepSpeedConfig

    config = AutoConfig.from_pretrained(model_path)
    tokenizer = AutoTokenizer.from_pretrained(model_path)
    world_size = int(os.getenv("WORLD_SIZE", "1"))
    local_rank = int(os.getenv("LOCAL_RANK", "0"))

    ds_config = {
        "fp16": {"enabled": dtype == torch.float16},
        "bf16": {"enabled": dtype == torch.bfloat16},
        "zero_optimization": {"stage": 3, "stage3_prefetch_bucket_size": 2 * config.hidden_size * config.hidden_size},
        "steps_per_print": 2000,
        "train_batch_size": 1,
        "wall_clock_breakdown": False,
    }
    if native_offload:
        ds_config["zero_optimization"]["offload_param"] = {"device": "cpu", "pin_memory": True}
    dschf = HfDeepSpeedConfig(ds_config)  # keep this object alive

    model = AutoModelForCausalLM.from_pretrained(
        model_path, torch_dtype=dtype, cache_dir=cache_dir if len(cache_dir) > 0 else None
    )
    model = model.eval()
    model = deepspeed.init_inference(
        model,
        mp_size=world_size,
        dtype=dtype,
        replace_with_kernel_inject=True,
    )
    model.module.tokenizer = tokenizer
    print(f"[lade] deepspeed inference engine on rank {local_rank}/{world_size}")
    return model.module, tokenizer


def get_model(model_path, quant, dtype, device, cache_dir, use_ds, native_offload=False):
    if use_ds:
        return get_ds_model(model_path, dtype, cache_dir, native_offload)
    else:
        return get_hf_model(model_path, quant, dtype, device, cache_dir)


class Timer:
    """with Timer("fwd"): ... -> prints wall time; host clock only."""

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        self.t = time.perf_counter()
        return self

    def __exit__(self, *exc):
        print(f"[{self.name}] {1000 * (time.perf_counter() - self.t):.2f} ms")
