import os
import time

import torch
import torch.distributed as dist
from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationMixin
from transformers.models.llama import modeling_llama

from lade.decoding import CONFIG_MAP, FUNC_MAP, greedy_search_proxy, sample_proxy
from lade.models import modeling_llama as lade_modeling_llama


def config_lade(WINDOW_SIZE=None, LEVEL=None, DEBUG=None, GUESS_SET_SIZE=None, ALWAYS_FWD_ONE=None, SPLIT_FLAG=None,
                DIST_WORKERS=None, POOL_FROM_PROMPT=None, backend='nccl', USE_FLASH=None):
    """Set the lookahead (Jacobi) decoding hyper-parameters.

    LEVEL is the n-gram size N, WINDOW_SIZE the lookahead branch width W and
    GUESS_SET_SIZE the number of cached n-grams G verified per step.
    DIST_WORKERS > 1 spreads the lookahead and verification branches over several
    devices (one process per device, launched with torchrun).
    """
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
        assert dist.get_world_size() == DIST_WORKERS, "DIST_WORKERS config should be equal to work size"
    if USE_FLASH is not None:
        CONFIG_MAP["USE_FLASH"] = USE_FLASH
        if USE_FLASH:
            _check_flash()

    CONFIG_MAP["log"] = []


def _check_flash():
    try:
        from flash_attn import flash_attn_func, flash_attn_with_kvcache  # noqa: F401
    except ImportError as e:
        raise ImportError("USE_FLASH=True needs flash-attn>=2.3.3 (pip install flash-attn --no-build-isolation)") from e
    major, _ = torch.cuda.get_device_capability()
    if major < 8:
        raise RuntimeError("flash-attn kernels need an Ampere (sm80) or newer GPU")


def inject_module(lade_module, original_module):
    s = {}
    for name, cls in lade_module.__dict__.items():
        if isinstance(cls, type):
            s[name] = cls

    for name, cls in original_module.__dict__.items():
        if isinstance(cls, type):
            if name in s and hasattr(s[name], "forward"):
                cls.forward = s[name].forward
                #print("replace ", name, " forward")
            if name in s and hasattr(s[name], "jforward_multilevel"):
                cls.jforward_multilevel = s[name].jforward_multilevel
            if name in s and hasattr(s[name], "j_prepare_decoder_attention_mask"):
                cls.j_prepare_decoder_attention_mask = s[name].j_prepare_decoder_attention_mask


def augment_llama():
    inject_module(lade_modeling_llama, modeling_llama)
    #llama.modeling_llama.LlamaForCausalLM = lade_modeling_llama.LlamaForCausalLM
    #modeling_llama.LlamaForCausalLM.jforward_multilevel = lookahead_llama.jforward_multilevel
    #modeling_llama.LlamaModel.LlamaModeljforward = lookahead_llama.LlamaModeljforward
    #modeling_llama.LlamaModel.j_prepare_decoder_attention_mask = lookahead_llama.j_prepare_decoder_attention_mask


def augment_generate():
    FUNC_MAP["greedy_search"] = GenerationMixin.greedy_search
    FUNC_MAP["sample"] = GenerationMixin.sample
    GenerationMixin.greedy_search = greedy_search_proxy
    GenerationMixin.sample = sample_proxy


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
        torch.save(CONFIG_MAP["log"], log_dir)


def get_hf_model(model_path, quant, dtype, device, cache_dir):
    tokenizer = AutoTokenizer.from_pretrained(model_path)
    assert quant is None or len(quant) == 0

    model = AutoModelForCausalLM.from_pretrained(model_path, torch_dtype=dtype, device_map=device,
                                                 cache_dir=cache_dir if len(cache_dir) > 0 else None)
    model = model.eval()
    model.tokenizer = tokenizer

    return model, tokenizer


def get_model(model_path, quant, dtype, device, cache_dir, use_ds, native_offload=False):
    return get_hf_model(model_path, quant, dtype, device, cache_dir)


def distributed_device():
    """Device of this lookahead worker (rank-local when DIST_WORKERS > 1)."""
    if CONFIG_MAP.get("DIST_WORKERS", 1) > 1:
        return torch.device("cuda", CONFIG_MAP["LOCAL_RANK"])
    return torch.device("cuda")


def sync_guess_tokens(guess_tokens, src=0):
    """Broadcast the n-gram pool guesses so that every worker verifies the same candidates."""
    if CONFIG_MAP.get("DIST_WORKERS", 1) <= 1:
        return guess_tokens
    n = torch.tensor([len(guess_tokens)], dtype=torch.long, device=distributed_device())
    dist.broadcast(n, src=src)
    buf = torch.zeros(int(n.item()), dtype=torch.long, device=distributed_device())
    if dist.get_rank() == src:
        buf.copy_(torch.as_tensor(guess_tokens, dtype=torch.long))
    dist.broadcast(buf, src=src)
    return buf.tolist()


def benchmark_generate(model, tokenizer, prompt, max_new_tokens=256, warmup=1, torch_device="cuda"):
    """Time greedy generation with and without lookahead, as in the paper's tables."""
    model_inputs = tokenizer(prompt, return_tensors="pt").to(torch_device)
    for _ in range(warmup):
        model.generate(**model_inputs, max_new_tokens=1)

    torch.cuda.synchronize()
    t0 = time.time()
    greedy_output = model.generate(**model_inputs, max_new_tokens=max_new_tokens, do_sample=False)
    torch.cuda.synchronize()  # wait for the last decode step
    t1 = time.time()

    new_tokens = greedy_output.numel() - model_inputs["input_ids"].numel()
    if CONFIG_MAP.get("DEBUG", 0):
        log_history()
    print(f"Generated {new_tokens} tokens in {t1 - t0:.2f}s ({new_tokens / (t1 - t0):.2f} tok/s),"
          f" peak mem {torch.cuda.max_memory_allocated() / 1e9:.2f} GB")
    return tokenizer.decode(greedy_output[0], skip_special_tokens=False), t1 - t0


if __name__ == "__main__":
    # python -m lade.utils meta-llama/Llama-2-7b-chat-hf
    import sys

    if int(os.environ.get("LOAD_LADE", 0)):
        augment_all()
        # For a 7B model, set LEVEL=5, WINDOW_SIZE=7, GUESS_SET_SIZE=7
        config_lade(LEVEL=7, WINDOW_SIZE=20, GUESS_SET_SIZE=20, DEBUG=1, POOL_FROM_PROMPT=True)

    assert torch.cuda.is_available()
    model_name = sys.argv[1] if len(sys.argv) > 1 else "meta-llama/Llama-2-7b-chat-hf"
    model, tokenizer = get_model(model_name, None, torch.float16, "cuda", "", False)
    text, _ = benchmark_generate(model, tokenizer, "How do you fine tune a large language model?")
    print(text)
