"""Attribution patching (AtP) on the IOI task with nnsight.

Linear approximation to activation patching: for every attention head output we compute
(clean_act - corrupt_act) . d(metric)/d(act) at the corrupted run, in one forward+backward pass
per batch instead of one forward pass per head.

    python experiments/attribution_patching.py --model meta-llama/Llama-2-7b-hf --n_prompts 64
"""

import argparse
import json
import time
from pathlib import Path

import torch
from nnsight import LanguageModel

from ioi_dataset import IOIDataset


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="meta-llama/Llama-2-7b-hf")
    p.add_argument("--n_prompts", type=int, default=64)
    p.add_argument("--batch_size", type=int, default=8)
    p.add_argument("--out", default="results/atp")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def main():
    args = parse_args()
    torch.manual_seed(args.seed)

    # bf16 halves memory for 7B models; fp16 overflows in Llama's MLP on long prompts.
    dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float32

    model = LanguageModel(
        args.model,
        device_map="auto",
        torch_dtype=dtype,
        attn_implementation="eager",
        dispatch=True,
    )
    tokenizer = model.tokenizer
    tokenizer.padding_side = "left"
    n_layers = model.config.num_hidden_layers
    n_heads = model.config.num_attention_heads
    d_head = model.config.hidden_size // n_heads

    ds = IOIDataset(tokenizer, n_prompts=args.n_prompts, seed=args.seed)

    # accumulate on the first GPU; per-layer results come back from whichever device holds that layer
    device = "cuda:0"
    attributions = torch.zeros(n_layers, n_heads, device=device, dtype=torch.float32)

    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()

    for batch in ds.batches(args.batch_size):
        clean, corrupt = batch["clean"], batch["corrupt"]
        correct_ids = torch.tensor(batch["correct_ids"], device=device)
        wrong_ids = torch.tensor(batch["wrong_ids"], device=device)

        # clean run: save the input to o_proj (= concatenated head outputs)
        clean_acts = []
        with model.trace(clean) as tracer:
            for layer in model.model.layers:
                clean_acts.append(layer.self_attn.o_proj.input.save())

        # corrupted run with gradients on the same activations
        corrupt_acts, corrupt_grads = [], []
        with model.trace(corrupt) as tracer:
            for layer in model.model.layers:
                act = layer.self_attn.o_proj.input
                corrupt_acts.append(act.save())
                corrupt_grads.append(act.grad.save())
            logits = model.lm_head.output[:, -1, :]
            metric = (
                logits.gather(1, correct_ids[:, None]).squeeze(1)
                - logits.gather(1, wrong_ids[:, None]).squeeze(1)
            ).mean()
            metric.backward()

        for l in range(n_layers):
            delta = (clean_acts[l].value - corrupt_acts[l].value).float()
            grad = corrupt_grads[l].value.float()
            # [batch, pos, d_model] -> [batch, pos, n_heads, d_head], sum over batch/pos/d_head
            per_head = (delta * grad).view(*delta.shape[:2], n_heads, d_head).sum(dim=(0, 1, 3))
            attributions[l] += per_head.to(device)

    end.record()
    torch.cuda.synchronize()
    elapsed_ms = start.elapsed_time(end)
    print(f"AtP over {args.n_prompts} prompts took {elapsed_ms / 1000:.1f}s")

    attributions /= args.n_prompts
    top = torch.topk(attributions.flatten().abs(), k=10)
    for v, i in zip(top.values.tolist(), top.indices.tolist()):
        l, h = divmod(i, n_heads)
        print(f"L{l}H{h}: {attributions[l, h].item():+.4f}")

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    torch.save(attributions.cpu(), out / "atp_heads.pt")
    with open(out / "meta.json", "w") as f:
        json.dump(
            {
                "model": args.model,
                "n_prompts": args.n_prompts,
                "dtype": str(dtype),
                "gpu": torch.cuda.get_device_name(0),
                "seconds": elapsed_ms / 1000,
            },
            f,
            indent=2,
        )


if __name__ == "__main__":
    main()
