# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.
#
# This source code is licensed under the BSD 3-Clause license found in the
# LICENSE file in the root directory of this source tree.
import os
import time
from pathlib import Path
from typing import Optional, Tuple

import torch
import torch._dynamo.config
import torch._inductor.config

torch._inductor.config.coordinate_descent_tuning = True
torch._inductor.config.triton.unique_kernel_names = True
torch._inductor.config.fx_graph_cache = True  # Experimental feature to reduce compilation times, will be on by default in future

default_device = "cuda" if torch.cuda.is_available() else "cpu"


def device_sync(device):
    if "cuda" in device:
        torch.cuda.synchronize(device)
    elif ("cpu" in device) or ("mps" in device):
        pass
    else:
        print(f"device={device} is not yet suppported")


def multinomial_sample_one_no_sync(probs_sort):
    q = torch.empty_like(probs_sort).exponential_(1)
    return torch.argmax(probs_sort / q, dim=-1, keepdim=True).to(dtype=torch.int)


def logits_to_probs(logits, temperature: float = 1.0, top_k: Optional[int] = None):
    logits = logits / max(temperature, 1e-5)
    if top_k is not None:
        v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
        pivot = v.select(-1, -1).unsqueeze(-1)
        logits = torch.where(logits < pivot, -float("Inf"), logits)
    probs = torch.nn.functional.softmax(logits, dim=-1)
    return probs


def sample(logits, temperature: float = 1.0, top_k: Optional[int] = None):
    probs = logits_to_probs(logits[0, -1], temperature, top_k)
    idx_next = multinomial_sample_one_no_sync(probs)
    return idx_next, probs


def prefill(model, x: torch.Tensor, input_pos: torch.Tensor, **sampling_kwargs) -> torch.Tensor:
    logits = model(x, input_pos)
    return sample(logits, **sampling_kwargs)[0]


def decode_one_token(model, x: torch.Tensor, input_pos: torch.Tensor, **sampling_kwargs) -> Tuple[torch.Tensor, torch.Tensor]:
    assert input_pos.shape[-1] == 1
    logits = model(x, input_pos)
    return sample(logits, **sampling_kwargs)


def decode_n_tokens(model, cur_token, input_pos, num_new_tokens: int, **sampling_kwargs):
    new_tokens, new_probs = [], []
    for i in range(num_new_tokens):
        next_token, next_prob = decode_one_token(model, cur_token, input_pos, **sampling_kwargs)
        input_pos += 1
        new_tokens.append(next_token.clone())
        new_probs.append(next_prob.clone())
        cur_token = next_token.view(1, -1)
    return new_tokens, new_probs


@torch.no_grad()
def generate(model, prompt: torch.Tensor, max_new_tokens: int, **sampling_kwargs) -> torch.Tensor:
    device = prompt.device
    T = prompt.numel()
    T_new = T + max_new_tokens
    seq = torch.empty(T_new, dtype=prompt.dtype, device=device)
    seq[:T] = prompt.view(-1)
    with torch.device(device):
        model.setup_caches(max_batch_size=1, max_seq_length=T_new)
    input_pos = torch.arange(0, T, device=device)
    next_token = prefill(model, prompt.view(1, -1), input_pos, **sampling_kwargs).clone()
    seq[T] = next_token
    input_pos = torch.tensor([T], device=device, dtype=torch.int)
    generated_tokens, _ = decode_n_tokens(model, next_token.view(1, -1), input_pos, max_new_tokens - 1, **sampling_kwargs)
    seq[T + 1:] = torch.cat(generated_tokens)
    return seq


def main(prompt: str = "Hello, my name is", max_new_tokens: int = 100, top_k: int = 200, temperature: float = 0.8,
         checkpoint_path: Path = Path("checkpoints/meta-Transformer/Transformer-2-7b-chat-hf/model.pth"),
         quantization: Optional[str] = None, compile: bool = True, compile_prefill: bool = False,
         device=default_device, precision=torch.bfloat16) -> None:
    from torchao.quantization import quantize_, int8_weight_only, int4_weight_only, float8_weight_only
    from torchao._models.llama.model import Transformer, prepare_inputs_for_model
    from torchao._models.llama.tokenizer import get_tokenizer

    torch.manual_seed(1234)
    print(f"Using device={device}")
    is_chat = "chat" in str(checkpoint_path)

    t0 = time.time()
    model = Transformer.from_name(checkpoint_path.parent.name)
    checkpoint = torch.load(str(checkpoint_path), mmap=True, weights_only=True)
    model.load_state_dict(checkpoint, assign=True)
    model = model.to(device=device, dtype=precision)
    device_sync(device=device)
    print(f"Time to load model: {time.time() - t0:.02f} seconds")

    tokenizer = get_tokenizer(checkpoint_path.parent / "tokenizer.model", checkpoint_path)
    encoded = torch.tensor(tokenizer.encode(prompt), dtype=torch.int, device=device)

    if quantization:
        if "int8wo" in quantization:
            quantize_(model, int8_weight_only())
        if "int4wo" in quantization:
            groupsize = int(quantization.split("-")[-1])
            assert groupsize in [32, 64, 128, 256], f"int4wo groupsize needs to be one of [32,64,128,256] but got {groupsize}"
            quantize_(model, int4_weight_only(group_size=groupsize))
        if "float8wo" in quantization:
            quantize_(model, float8_weight_only())

    if compile:
        global decode_one_token, prefill
        decode_one_token = torch.compile(decode_one_token, mode="reduce-overhead", fullgraph=True)
        if compile_prefill:
            prefill = torch.compile(prefill, fullgraph=True, dynamic=True)

    torch.cuda.reset_peak_memory_stats()
    for i in range(3):
        device_sync(device=device)
        t0 = time.perf_counter()
        y = generate(model, encoded, max_new_tokens, temperature=temperature, top_k=top_k)
        device_sync(device=device)
        t = time.perf_counter() - t0
        tokens_generated = y.size(0) - encoded.size(0)
        print(f"Iter {i}: {tokens_generated / t:.02f} tokens/sec")
    mem = torch.cuda.max_memory_reserved() / 1e9
    print(f"Memory used: {mem:.02f} GB")
    print(tokenizer.decode(y.tolist()))


if __name__ == "__main__":
    import argparse
    parser = argparse.ArgumentParser(description="Your CLI description.")
    parser.add_argument("--prompt", type=str, default="Hello, my name is")
    parser.add_argument("--max_new_tokens", type=int, default=200)
    parser.add_argument("--quantization", type=str, help="Which quantization techniques to apply: int8wo, int4wo-<groupsize>, float8wo")
    parser.add_argument("--compile", action="store_true")
    parser.add_argument("--device", type=str, default=default_device)
    args = parser.parse_args()
    main(args.prompt, args.max_new_tokens, quantization=args.quantization, compile=args.compile, device=args.device)
