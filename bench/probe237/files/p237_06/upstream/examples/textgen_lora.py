"""Interactive multi-LoRA text generation demo.

Serves several LoRA fine-tunes of the same LLaMA base at once: each request
names the adapter it wants and the batch is run through a single
``LlamaForCausalLMWithLora`` forward with SGMV.

    python examples/textgen_lora.py --base-model meta-llama/Llama-2-7b-hf \
        --lora gsm8k=/models/lora/gsm8k.punica.pt \
        --lora sqlctx=/models/lora/sqlctx.punica.pt \
        --prompt gsm8k:"Natalia sold clips to 48 of her friends..." \
        --prompt sqlctx:"CREATE TABLE head (age INTEGER) ..."
"""
import argparse
import dataclasses
import sys
import time
from typing import Dict, List

import torch
import transformers

from punica.models.llama_lora import (
    BatchedLlamaLoraWeight,
    BatchLenInfo,
    LlamaForCausalLMWithLora,
    LlamaLoraWeight,
)
from punica.utils.kvcache import BatchedKvCache, KvCache, KvPool


@dataclasses.dataclass
class GenerationConfig:
    max_new_tokens: int = 256
    temperature: float = 0.7
    top_p: float = 0.9
    repetition_penalty: float = 1.1


class TextGeneration:
    def __init__(
        self,
        input_ids: List[int],
        lora_id: str,
        cfg: GenerationConfig,
        stop_token_id: int,
        kvpool: KvPool,
    ):
        self.lora_id = lora_id
        self.cfg = cfg
        self.stop_token_id = stop_token_id
        self.prompt_len = len(input_ids)
        self.output_ids = list(input_ids)
        self.kvcache = KvCache(kvpool, len(input_ids))
        self.done = False
        self._processors = transformers.LogitsProcessorList()
        if cfg.repetition_penalty != 1.0:
            self._processors.append(
                transformers.RepetitionPenaltyLogitsProcessor(cfg.repetition_penalty)
            )
        if cfg.temperature > 0 and cfg.temperature != 1.0:
            self._processors.append(transformers.TemperatureLogitsWarper(cfg.temperature))
        if 0 < cfg.top_p < 1.0:
            self._processors.append(transformers.TopPLogitsWarper(cfg.top_p))

    def next_input_ids(self) -> List[int]:
        if len(self.output_ids) == self.prompt_len:
            return self.output_ids
        return self.output_ids[-1:]

    def add_logits(self, logits: torch.Tensor):
        ids = torch.tensor([self.output_ids], device=logits.device)
        last = self._processors(ids, logits.unsqueeze(0))[0]
        if self.cfg.temperature <= 0:
            token = int(torch.argmax(last))
        else:
            probs = torch.softmax(last.float(), dim=-1)
            token = int(torch.multinomial(probs, num_samples=1))
        self.output_ids.append(token)
        n_new = len(self.output_ids) - self.prompt_len
        if token == self.stop_token_id or n_new >= self.cfg.max_new_tokens:
            self.done = True
        else:
            self.kvcache.acquire_one()

    def release(self):
        self.kvcache.release()


def load_lora(path: str, model_config, lora_rank: int, dtype, device) -> LlamaLoraWeight:
    # adapters are stored in punica layout (see punica.utils.convert_lora_weight)
    tensors: Dict[str, torch.Tensor] = torch.load(path, map_location="cuda:0", weights_only=True)
    lora = LlamaLoraWeight(model_config, lora_rank, dtype, device)
    lora.copy_from_tensors(tensors)
    return lora


def parse_kv(items: List[str], sep: str) -> List[tuple]:
    out = []
    for item in items:
        if sep not in item:
            raise argparse.ArgumentTypeError(f"expected NAME{sep}VALUE, got {item!r}")
        k, v = item.split(sep, 1)
        out.append((k, v))
    return out


@torch.inference_mode()
def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--base-model", required=True)
    parser.add_argument("--lora", action="append", default=[], help="name=path.punica.pt")
    parser.add_argument("--lora-rank", type=int, default=16)
    parser.add_argument("--prompt", action="append", default=[], help="lora_name:prompt")
    parser.add_argument("--max-new-tokens", type=int, default=256)
    parser.add_argument("--temperature", type=float, default=0.7)
    parser.add_argument("--page-len", type=int, default=16)
    parser.add_argument("--max-batch", type=int, default=32)
    parser.add_argument("--max-seqlen", type=int, default=2048)
    args = parser.parse_args()

    if not torch.cuda.is_available():
        print("This demo needs an NVIDIA GPU.", file=sys.stderr)
        sys.exit(1)

    dtype = torch.float16
    device = torch.device("cuda:0")
    torch.cuda.set_device(device)

    tokenizer = transformers.AutoTokenizer.from_pretrained(args.base_model, use_fast=True)
    model_config = transformers.LlamaConfig.from_pretrained(args.base_model)
    model = LlamaForCausalLMWithLora.from_pretrained(
        args.base_model, low_cpu_mem_usage=True, torch_dtype=dtype
    ).cuda()
    model.eval()

    kvpool = KvPool(
        num_layers=model_config.num_hidden_layers,
        num_heads=model_config.num_key_value_heads,
        head_dim=model_config.hidden_size // model_config.num_attention_heads,
        page_len=args.page_len,
        dtype=dtype,
        device=device,
    )

    loras = {
        name: load_lora(path, model_config, args.lora_rank, dtype, device)
        for name, path in parse_kv(args.lora, "=")
    }
    # an all-zero adapter so plain base-model requests can share the batch
    loras["base"] = LlamaLoraWeight(model_config, args.lora_rank, dtype, device)

    cfg = GenerationConfig(max_new_tokens=args.max_new_tokens, temperature=args.temperature)
    reqs: List[TextGeneration] = []
    for lora_name, prompt in parse_kv(args.prompt, ":"):
        if lora_name not in loras:
            raise SystemExit(f"unknown adapter {lora_name!r}; loaded: {sorted(loras)}")
        ids = tokenizer.encode(prompt)
        reqs.append(TextGeneration(ids, lora_name, cfg, tokenizer.eos_token_id, kvpool))
    # group requests by adapter: SGMV wants contiguous segments
    reqs.sort(key=lambda r: r.lora_id)

    t0 = time.perf_counter()
    n_tokens = 0
    step = 0
    while any(not r.done for r in reqs):
        live = [r for r in reqs if not r.done]
        prefill = [r for r in live if len(r.output_ids) == r.prompt_len]
        decode = [r for r in live if len(r.output_ids) > r.prompt_len]
        batch = prefill + decode

        input_ids, lora_ids, lora_lens = [], [], []
        for r in batch:
            ids = r.next_input_ids()
            input_ids.extend(ids)
            if lora_ids and lora_ids[-1] == r.lora_id:
                lora_lens[-1] += len(ids)
            else:
                lora_ids.append(r.lora_id)
                lora_lens.append(len(ids))

        blen = BatchLenInfo([len(r.output_ids) for r in prefill], len(decode), device)
        prefill_kv = BatchedKvCache([r.kvcache for r in prefill]) if prefill else None
        decode_kv = BatchedKvCache([r.kvcache for r in decode]) if decode else None
        lora = BatchedLlamaLoraWeight([loras[i] for i in lora_ids], lora_lens)

        input_t = torch.tensor(input_ids, dtype=torch.long, device=device)
        logits, _ = model(input_t, blen, prefill_kv, decode_kv, lora)

        # prefill logits: keep only the last position of every prompt
        last_idx = torch.cumsum(torch.tensor([len(r.output_ids) for r in prefill], device=device), 0) - 1
        last_logits = torch.cat([logits[last_idx], logits[blen.doff:]]) if prefill else logits
        for r, lg in zip(batch, last_logits):
            r.add_logits(lg)
            n_tokens += 1
        for r in batch:
            if r.done:
                r.release()
        step += 1

    torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    for r in reqs:
        text = tokenizer.decode(r.output_ids[r.prompt_len:], skip_special_tokens=True)
        print(f"[{r.lora_id}] {text}\n")
    print(f"{step} steps, {n_tokens} tokens in {dt:.2f}s ({n_tokens / dt:.1f} tok/s), "
          f"peak mem {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
