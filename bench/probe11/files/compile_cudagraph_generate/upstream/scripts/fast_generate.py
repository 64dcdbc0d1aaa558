"""Low-latency greedy decoding: static KV cache + torch.compile for prefill, and a hand-captured CUDA graph
for the single-token decode step (the graph is replayed once per generated token).

    python scripts/fast_generate.py --model google/gemma-2-2b-it --prompt "Write a haiku about rust" --max-new 128
"""
import argparse
import time

import torch
import torch._dynamo.config
import torch._inductor.config
from transformers import AutoModelForCausalLM, AutoTokenizer, StaticCache

torch._inductor.config.coordinate_descent_tuning = True
torch._inductor.config.triton.unique_kernel_names = True
torch._inductor.config.fx_graph_cache = True
torch._dynamo.config.cache_size_limit = 64

DEVICE = torch.device("cuda", 0)


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="google/gemma-2-2b-it")
    ap.add_argument("--prompt", default="Explain KV caching in two sentences.")
    ap.add_argument("--max-new", type=int, default=128)
    ap.add_argument("--max-cache-len", type=int, default=2048)
    ap.add_argument("--no-graph", action="store_true")
    ap.add_argument("--compile-mode", default="max-autotune-no-cudagraphs")
    return ap.parse_args()


class GraphedDecoder:
    """Captures model(input_ids[1,1], cache_position[1]) -> next-token logits into one CUDA graph."""

    def __init__(self, model, cache):
        self.model = model
        self.cache = cache
        self.static_input = torch.zeros((1, 1), dtype=torch.long, device=DEVICE)
        self.static_pos = torch.zeros((1,), dtype=torch.long, device=DEVICE)
        self.static_logits = None
        self.graph = None

    def _step(self):
        out = self.model(input_ids=self.static_input, cache_position=self.static_pos,
                         past_key_values=self.cache, use_cache=True, return_dict=True)
        return out.logits[:, -1, :]

    def capture(self, warmup_pos):
        self.static_pos.fill_(warmup_pos)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                self._step()
        torch.cuda.current_stream().wait_stream(s)

        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.static_logits = self._step()

    def __call__(self, token, pos):
        self.static_input.copy_(token)
        self.static_pos.fill_(pos)
        self.graph.replay()
        return self.static_logits


@torch.inference_mode()
def generate(model, tok, prompt, max_new, max_cache_len, use_graph, compiled_forward):
    enc = tok.apply_chat_template([{"role": "user", "content": prompt}], add_generation_prompt=True,
                                  return_tensors="pt").to(DEVICE)
    seq_len = enc.shape[1]
    cache = StaticCache(config=model.config, max_batch_size=1, max_cache_len=max_cache_len, device=DEVICE,
                        dtype=model.dtype)
    cache_position = torch.arange(seq_len, device=DEVICE)

    torch.cuda.synchronize()  # start the clock on an idle device
    t0 = time.perf_counter()
    logits = compiled_forward(input_ids=enc, cache_position=cache_position, past_key_values=cache,
                              use_cache=True, return_dict=True).logits[:, -1, :]
    next_tok = logits.argmax(-1, keepdim=True)
    torch.cuda.synchronize()  # prefill done
    ttft = time.perf_counter() - t0

    decoder = GraphedDecoder(model, cache) if use_graph else None
    out_tokens = [next_tok.item()]
    pos = seq_len
    t1 = time.perf_counter()
    for i in range(max_new - 1):
        if decoder is not None:
            if decoder.graph is None:
                decoder.capture(pos)
            logits = decoder(next_tok, pos)
        else:
            logits = model(input_ids=next_tok, cache_position=torch.tensor([pos], device=DEVICE),
                           past_key_values=cache, use_cache=True).logits[:, -1, :]
        next_tok = logits.argmax(-1, keepdim=True)
        pos += 1
        t = next_tok.item()
        out_tokens.append(t)
        if t == tok.eos_token_id:
            break
    torch.cuda.synchronize()  # decode done
    decode_s = time.perf_counter() - t1
    return tok.decode(out_tokens, skip_special_tokens=True), ttft, decode_s, len(out_tokens)


def main():
    args = parse_args()
    torch.set_float32_matmul_precision("high")
    tok = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=torch.bfloat16,
                                                 attn_implementation="sdpa").to(DEVICE).eval()
    model.generation_config.cache_implementation = "static"

    compiled_forward = torch.compile(model.forward, mode=args.compile_mode, fullgraph=True, dynamic=False)

    for attempt in range(2):  # first call compiles
        text, ttft, decode_s, n = generate(model, tok, args.prompt, args.max_new, args.max_cache_len,
                                           not args.no_graph, compiled_forward)
        label = "warm-up" if attempt == 0 else "measured"
        print(f"[{label}] TTFT {ttft * 1000:.1f} ms, decode {n / decode_s:.1f} tok/s ({n} tokens)")
    print("-" * 60)
    print(text)
    print("-" * 60)
    print(f"peak memory {torch.cuda.max_memory_allocated(DEVICE) / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
