"""Speculative decoding benchmark: a small draft model proposes gamma tokens, the target verifies them.

Draft and target can live on different GPUs (--draft-device cuda:1); KV caches are HF DynamicCache.
"""
import argparse
import time

import torch
import torch.nn.functional as F
from transformers import AutoModelForCausalLM, AutoTokenizer


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--target", default="meta-llama/Llama-2-13b-hf")
    p.add_argument("--draft", default="JackFram/llama-160m")
    p.add_argument("--target-device", default="cuda:0")
    p.add_argument("--draft-device", default="cuda:1" if torch.cuda.device_count() > 1 else "cuda:0")
    p.add_argument("--gamma", type=int, default=4)
    p.add_argument("--max-new-tokens", type=int, default=256)
    p.add_argument("--temperature", type=float, default=0.0)
    p.add_argument("--prompt", default="Explain the difference between a process and a thread.")
    p.add_argument("--attn", default="flash_attention_2", choices=["flash_attention_2", "sdpa", "eager"])
    return p.parse_args()


def norm_logits(logits, temperature):
    if temperature == 0:
        return F.one_hot(logits.argmax(-1), logits.shape[-1]).float()
    return F.softmax(logits.float() / temperature, dim=-1)


def sample_from(p):
    return torch.multinomial(p, 1)


@torch.no_grad()
def speculative_generate(target, draft, input_ids, gamma, max_new, temperature, t_dev, d_dev):
    seq = input_ids.to(t_dev)
    accepted_total, proposed_total = 0, 0
    while seq.shape[1] - input_ids.shape[1] < max_new:
        # 1) draft proposes gamma tokens autoregressively
        d_seq = seq.to(d_dev)
        d_probs = []
        for _ in range(gamma):
            logits = draft(d_seq).logits[:, -1]
            p = norm_logits(logits, temperature)
            nxt = sample_from(p)
            d_probs.append(p)
            d_seq = torch.cat([d_seq, nxt], dim=1)
        proposal = d_seq[:, seq.shape[1]:].to(t_dev)
        d_probs = torch.stack(d_probs, dim=1).to(t_dev)
        # 2) target scores all gamma+1 positions in one pass
        t_logits = target(torch.cat([seq, proposal], dim=1)).logits[:, -gamma - 1:]
        t_probs = norm_logits(t_logits, temperature)
        # 3) accept / reject
        n_acc = 0
        for i in range(gamma):
            tok = proposal[:, i]
            ratio = t_probs[:, i].gather(-1, tok[:, None]) / d_probs[:, i].gather(-1, tok[:, None]).clamp_min(1e-10)
            if torch.rand(1, device=t_dev) < ratio.clamp(max=1.0):
                n_acc += 1
            else:
                break
        proposed_total += gamma
        accepted_total += n_acc
        seq = torch.cat([seq, proposal[:, :n_acc]], dim=1)
        if n_acc < gamma:
            resid = (t_probs[:, n_acc] - d_probs[:, n_acc]).clamp_min(0)
            resid = resid / resid.sum(-1, keepdim=True).clamp_min(1e-10)
            seq = torch.cat([seq, sample_from(resid)], dim=1)
        else:
            seq = torch.cat([seq, sample_from(t_probs[:, -1])], dim=1)
    return seq, accepted_total / max(proposed_total, 1)


@torch.no_grad()
def baseline_generate(target, input_ids, max_new, t_dev):
    return target.generate(input_ids.to(t_dev), max_new_tokens=max_new, do_sample=False)


def timed(fn, *a):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    out = fn(*a)
    torch.cuda.synchronize()  # stop the clock after the device finishes
    return out, time.perf_counter() - t0


def main():
    args = parse()
    tok = AutoTokenizer.from_pretrained(args.target)
    target = AutoModelForCausalLM.from_pretrained(args.target, torch_dtype=torch.float16,
                                                  attn_implementation=args.attn).to(args.target_device).eval()
    draft = AutoModelForCausalLM.from_pretrained(args.draft, torch_dtype=torch.float16,
                                                 attn_implementation="sdpa").to(args.draft_device).eval()
    ids = tok(args.prompt, return_tensors="pt").input_ids
    torch.manual_seed(0)
    (base, t_base) = timed(baseline_generate, target, ids, args.max_new_tokens, args.target_device)
    (spec, rate), t_spec = timed(speculative_generate, target, draft, ids, args.gamma, args.max_new_tokens,
                                 args.temperature, args.target_device, args.draft_device)
    n_base = base.shape[1] - ids.shape[1]
    n_spec = spec.shape[1] - ids.shape[1]
    print(f"baseline   : {n_base / t_base:.1f} tok/s")
    print(f"speculative: {n_spec / t_spec:.1f} tok/s, acceptance {rate:.2%}, speed-up {t_base / n_base / (t_spec / n_spec):.2f}x")
    print(f"peak memory target {torch.cuda.max_memory_allocated(args.target_device) / 2**30:.1f} GiB")
    print(tok.decode(spec[0, ids.shape[1]:], skip_special_tokens=True))


if __name__ == "__main__":
    main()
