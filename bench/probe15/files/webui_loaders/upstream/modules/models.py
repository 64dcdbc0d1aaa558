import gc
import os
import time
from pathlib import Path

import torch
import transformers
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig

from modules import shared
from modules.logging_colors import logger

local_rank = None
if shared.args.deepspeed:
    import deepspeed
    from transformers.integrations.deepspeed import HfDeepSpeedConfig
    from modules.deepspeed_parameters import generate_ds_config

    local_rank = shared.args.local_rank if shared.args.local_rank is not None else int(os.getenv("LOCAL_RANK", "0"))
    world_size = int(os.getenv("WORLD_SIZE", "1"))
    torch.cuda.set_device(local_rank)
    deepspeed.init_distributed()
    ds_config = generate_ds_config(shared.args.bf16, 1 * world_size, shared.args.nvme_offload_dir)
    dschf = HfDeepSpeedConfig(ds_config)


def load_model(model_name, loader=None):
    logger.info(f"Loading \"{model_name}\"")
    t0 = time.time()
    load_func_map = {
        "Transformers": huggingface_loader,
        "AutoGPTQ": autogptq_loader,
        "ExLlamav2": exllamav2_loader,
        "ExLlamav2_HF": exllamav2_hf_loader,
        "llama.cpp": llamacpp_loader,
    }
    loader = loader or shared.args.loader or "Transformers"
    output = load_func_map[loader](model_name)
    model, tokenizer = output if isinstance(output, tuple) else (output, load_tokenizer(model_name))
    logger.info(f"Loaded the model in {(time.time() - t0):.2f} seconds.")
    return model, tokenizer


def load_tokenizer(model_name):
    path = Path(f"{shared.args.model_dir}/{model_name}/")
    return AutoTokenizer.from_pretrained(path, trust_remote_code=shared.args.trust_remote_code, use_fast=True)


def huggingface_loader(model_name):
    path = Path(f"{shared.args.model_dir}/{model_name}")
    params = {
        "low_cpu_mem_usage": True,
        "torch_dtype": torch.bfloat16 if shared.args.bf16 else torch.float16,
        "attn_implementation": shared.args.attn_implementation,
    }
    if shared.args.cpu:
        params["torch_dtype"] = torch.float32
        return AutoModelForCausalLM.from_pretrained(path, **params)

    if not any((shared.args.load_in_8bit, shared.args.load_in_4bit, shared.args.auto_devices)):
        model = AutoModelForCausalLM.from_pretrained(path, **params)
        if torch.backends.mps.is_available():
            model = model.to(torch.device("mps"))
        else:
            model = model.cuda()
        return model

    params["device_map"] = "auto"
    if shared.args.load_in_4bit:
        params["quantization_config"] = BitsAndBytesConfig(
            load_in_4bit=True,
            bnb_4bit_compute_dtype=getattr(torch, shared.args.compute_dtype),
            bnb_4bit_quant_type=shared.args.quant_type,
            bnb_4bit_use_double_quant=shared.args.use_double_quant,
        )
    elif shared.args.load_in_8bit:
        params["quantization_config"] = BitsAndBytesConfig(load_in_8bit=True, llm_int8_enable_fp32_cpu_offload=True)
    params["max_memory"] = get_max_memory_dict()
    return AutoModelForCausalLM.from_pretrained(path, **params)


def autogptq_loader(model_name):
    import modules.AutoGPTQ_loader
    return modules.AutoGPTQ_loader.load_quantized(model_name)


def exllamav2_loader(model_name):
    from modules.exllamav2 import Exllamav2Model
    model, tokenizer = Exllamav2Model.from_pretrained(model_name)
    return model, tokenizer


def exllamav2_hf_loader(model_name):
    from modules.exllamav2_hf import Exllamav2HF
    return Exllamav2HF.from_pretrained(model_name)


def llamacpp_loader(model_name):
    from modules.llamacpp_model import LlamaCppModel
    path = Path(f"{shared.args.model_dir}/{model_name}")
    model_file = path if path.is_file() else sorted(path.glob("*.gguf"))[0]
    logger.info(f"llama.cpp weights detected: \"{model_file}\"")
    model, tokenizer = LlamaCppModel.from_pretrained(model_file)
    return model, tokenizer


def get_max_memory_dict():
    max_memory = {}
    max_cpu_memory = shared.args.cpu_memory.strip() if shared.args.cpu_memory is not None else "99GiB"
    if shared.args.gpu_memory:
        memory_map = list(map(lambda x: x.strip(), shared.args.gpu_memory))
        for i in range(len(memory_map)):
            max_memory[i] = f"{memory_map[i]}GiB" if not memory_map[i].lower().endswith("ib") else memory_map[i]
        max_memory["cpu"] = f"{max_cpu_memory}GiB" if not max_cpu_memory.lower().endswith("ib") else max_cpu_memory
    elif shared.args.auto_devices:
        total_mem = torch.cuda.get_device_properties(0).total_memory / (1024 * 1024)
        suggestion = round((total_mem - 1000) / 1000) * 1000
        if total_mem - suggestion < 800:
            suggestion -= 1000
        suggestion = int(round(suggestion / 1000))
        logger.warning(f"Auto-assiging --gpu-memory {suggestion} for your GPU to try to prevent out-of-memory errors.")
        max_memory[0] = f"{suggestion}GiB"
        max_memory["cpu"] = f"{max_cpu_memory}GiB"
    return max_memory if len(max_memory) > 0 else None


def clear_torch_cache():
    gc.collect()
    if not shared.args.cpu:
        if torch.backends.mps.is_available():
            torch.mps.empty_cache()
        else:
            torch.cuda.empty_cache()


def unload_model():
    shared.model = shared.tokenizer = None
    shared.lora_names = []
    shared.model_dirty_from_training = False
    clear_torch_cache()


def reload_model():
    unload_model()
    shared.model, shared.tokenizer = load_model(shared.model_name)
