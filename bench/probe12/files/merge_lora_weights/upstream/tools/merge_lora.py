"""Merge LoRA adapters (PEFT format or raw lora_A/lora_B state dicts) into a base chat model.

    python tools/merge_lora.py --base baichuan-inc/Baichuan2-13B-Chat --lora output/lora \
        --out merged/ --dtype fp16

The merge itself is done on the GPU layer by layer: a 13B fp16 model fits on one 80G card and the
matmuls are ~50x faster than on CPU.
"""
import argparse
import gc
import glob
import json
import os
import shutil

import torch
from safetensors.torch import load_file, save_file
from tqdm import tqdm

DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--base", required=True)
    p.add_argument("--lora", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--dtype", default="fp16", choices=list(DTYPES))
    p.add_argument("--max_shard_size", default="5GB")
    return p.parse_args()


def load_lora_state(lora_dir):
    cfg_path = os.path.join(lora_dir, "adapter_config.json")
    with open(cfg_path) as f:
        cfg = json.load(f)
    st = os.path.join(lora_dir, "adapter_model.safetensors")
    if os.path.exists(st):
        state = load_file(st, device="cuda")
    else:
        state = torch.load(os.path.join(lora_dir, "adapter_model.bin"), map_location="cuda")
    scaling = cfg["lora_alpha"] / cfg["r"]
    fan_in_fan_out = cfg.get("fan_in_fan_out", False)
    return state, scaling, fan_in_fan_out


def lora_pairs(state):
    """Map base weight name -> (A, B) from PEFT names like
    base_model.model.model.layers.0.self_attn.W_pack.lora_A.weight"""
    pairs = {}
    for k, v in state.items():
        if ".lora_A." not in k:
            continue
        base = k.replace("base_model.model.", "").replace(".lora_A.weight", ".weight").replace(".lora_A.default", "")
        b_key = k.replace(".lora_A.", ".lora_B.")
        pairs[base] = (v, state[b_key])
    return pairs


def base_shards(base_dir):
    index = glob.glob(os.path.join(base_dir, "*.index.json"))
    if index:
        with open(index[0]) as f:
            weight_map = json.load(f)["weight_map"]
        return sorted(set(weight_map.values())), index[0]
    files = glob.glob(os.path.join(base_dir, "*.safetensors")) or glob.glob(os.path.join(base_dir, "*.bin"))
    return [os.path.basename(f) for f in files], None


@torch.no_grad()
def merge_shard(path, pairs, scaling, fan_in_fan_out, dtype):
    if path.endswith(".safetensors"):
        shard = load_file(path)
    else:
        shard = torch.load(path, map_location="cpu")
    merged = 0
    for name in list(shard.keys()):
        if name not in pairs:
            shard[name] = shard[name].to(dtype)
            continue
        A, B = pairs[name]
        w = shard[name].to(dtype).cuda(non_blocking=True)
        delta = (B.float() @ A.float()) * scaling
        if fan_in_fan_out:
            delta = delta.T
        w += delta.to(w.dtype)
        shard[name] = w.cpu()
        merged += 1
    torch.cuda.synchronize()
    return shard, merged


def main():
    args = parse_args()
    dtype = DTYPES[args.dtype]
    os.makedirs(args.out, exist_ok=True)
    state, scaling, fan_in_fan_out = load_lora_state(args.lora)
    pairs = lora_pairs(state)
    print(f"{len(pairs)} LoRA pairs, scaling={scaling}")
    shards, index_path = base_shards(args.base)
    total = 0
    for shard_name in tqdm(shards):
        shard, merged = merge_shard(os.path.join(args.base, shard_name), pairs, scaling, fan_in_fan_out, dtype)
        total += merged
        out_name = shard_name.replace(".bin", ".safetensors").replace("pytorch_model", "model")
        save_file({k: v.contiguous() for k, v in shard.items()}, os.path.join(args.out, out_name),
                  metadata={"format": "pt"})
        del shard
        gc.collect()
        torch.cuda.empty_cache()
    if index_path:
        with open(index_path) as f:
            index = json.load(f)
        index["weight_map"] = {k: v.replace(".bin", ".safetensors").replace("pytorch_model", "model")
                               for k, v in index["weight_map"].items()}
        with open(os.path.join(args.out, "model.safetensors.index.json"), "w") as f:
            json.dump(index, f, indent=2)
    for extra in glob.glob(os.path.join(args.base, "*.json")) + glob.glob(os.path.join(args.base, "*.py")) + \
            glob.glob(os.path.join(args.base, "tokenizer*")):
        if not extra.endswith(".index.json"):
            shutil.copy(extra, args.out)
    print(f"merged {total} / {len(pairs)} weights into {args.out}")
    assert total == len(pairs), "some LoRA weights did not match any base weight"


if __name__ == "__main__":
    main()
