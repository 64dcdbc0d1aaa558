"""
Multi-GPU collection of the second-moment statistics (E[k k^T]) that ROME / MEMIT /
AlphaEdit use as the key covariance.  The single-process collector in
rome/layer_stats.py needs ~20h for 100k Wikipedia samples on GPT-J; this script shards
the samples across ranks and all-reduces the running sums.

    torchrun --nproc_per_node 8 scripts/collect_layer_stats_ddp.py \
        --model_name EleutherAI/gpt-j-6B --layers 3,4,5,6,7,8 --sample_size 100000

Output files use the same layout/naming as rome/layer_stats.py so that
get_cov()/get_inv_cov() pick them up transparently.
"""
import argparse
import datetime
import os
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
from datasets import load_dataset
from tqdm import tqdm
from transformers import AutoModelForCausalLM, AutoTokenizer

from rome.tok_dataset import TokenizedDataset, dict_to_, flatten_masked_batch, length_collation
from util.globals import STATS_DIR
from util.nethook import Trace, set_requires_grad


def parse_args():
    p = argparse.ArgumentParser(description="Distributed layer-stats collector")
    p.add_argument("--model_name", default="EleutherAI/gpt-j-6B")
    p.add_argument("--dataset", default="wikipedia", choices=["wikitext", "wikipedia"])
    p.add_argument("--layers", default="3,4,5,6,7,8", type=lambda x: [int(v) for v in x.split(",")])
    p.add_argument("--layer_tmp", default="transformer.h.{}.mlp.fc_out")
    p.add_argument("--sample_size", default=100000, type=int)
    p.add_argument("--batch_tokens", default=2048, type=int)
    p.add_argument("--precision", default="float32", choices=["float64", "float32"])
    p.add_argument("--stats_dir", default=str(STATS_DIR))
    p.add_argument("--fp16_model", action="store_true", help="load the model in fp16 to fit 8x24GB cards")
    return p.parse_args()


def setup_distributed():
    """torchrun sets RANK / LOCAL_RANK / WORLD_SIZE; fall back to a single process."""
    if "RANK" not in os.environ:
        return 0, 0, 1
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ["LOCAL_RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    # Surface a hung collective as an exception instead of a silent stall
    os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")
    torch.cuda.set_device(local_rank)
    dist.init_process_group(
        backend="nccl",
        init_method="env://",
        timeout=datetime.timedelta(minutes=60),
    )
    return rank, local_rank, world_size


def is_main(rank):
    return rank == 0


def stats_filename(stats_dir, model_name, ds_name, layer_name, precision, sample_size):
    model_name = model_name.replace("/", "_")
    return Path(stats_dir) / model_name / f"{ds_name}_stats" / f"{layer_name}_{precision}_mom2_{sample_size}.npz"


def shard_indices(n_total, rank, world_size, seed=1):
    rng = np.random.RandomState(seed)
    order = rng.permutation(n_total)
    return order[rank::world_size].tolist()


def main():
    args = parse_args()
    rank, local_rank, world_size = setup_distributed()
    device = torch.device(f"cuda:{local_rank}")

    tok = AutoTokenizer.from_pretrained(args.model_name)
    model = AutoModelForCausalLM.from_pretrained(
        args.model_name,
        torch_dtype=torch.float16 if args.fp16_model else torch.float32,
        low_cpu_mem_usage=True,
    ).eval().to(device)
    set_requires_grad(False, model)
    dtype = getattr(torch, args.precision)

    raw_ds = load_dataset(
        args.dataset,
        dict(wikitext="wikitext-103-raw-v1", wikipedia="20200501.en")[args.dataset],
    )
    maxlen = min(model.config.n_positions, args.batch_tokens)
    ds = TokenizedDataset(raw_ds["train"], tok, maxlen=maxlen)
    n_total = min(args.sample_size, len(ds))
    my_idx = shard_indices(n_total, rank, world_size)
    subset = torch.utils.data.Subset(ds, my_idx)
    loader = torch.utils.data.DataLoader(
        subset,
        batch_size=100,
        collate_fn=length_collation(args.batch_tokens),
        num_workers=4,
        pin_memory=True,
    )

    layer_names = [args.layer_tmp.format(l) for l in args.layers]
    mom2 = {}
    counts = {}
    with torch.no_grad():
        for batch_group in tqdm(loader, disable=not is_main(rank), desc="collecting"):
            for batch in batch_group:
                batch = dict_to_(batch, f"cuda:{local_rank}")
                for layer_name in layer_names:
                    with Trace(model, layer_name, retain_input=True, retain_output=False, stop=True) as tr:
                        model(**batch)
                    feats = flatten_masked_batch(tr.input, batch["attention_mask"]).to(dtype)
                    if layer_name not in mom2:
                        mom2[layer_name] = torch.zeros(feats.shape[1], feats.shape[1], dtype=dtype, device=device)
                        counts[layer_name] = torch.zeros((), dtype=torch.float64, device=device)
                    mom2[layer_name].addmm_(feats.t(), feats)
                    counts[layer_name] += feats.shape[0]

    if world_size > 1:
        for layer_name in layer_names:
            dist.all_reduce(mom2[layer_name], op=dist.ReduceOp.SUM)
            dist.all_reduce(counts[layer_name], op=dist.ReduceOp.SUM)
        dist.barrier()

    if is_main(rank):
        for layer_name in layer_names:
            fname = stats_filename(args.stats_dir, args.model_name, args.dataset, layer_name, args.precision, args.sample_size)
            fname.parent.mkdir(parents=True, exist_ok=True)
            np.savez(
                fname,
                constructor="util.runningstats.CombinedStat()",
                mom2=dict(
                    constructor="util.runningstats.SecondMoment()",
                    count=int(counts[layer_name].item()),
                    mom2=mom2[layer_name].cpu().numpy(),
                ),
            )
            print(f"[rank0] wrote {fname} ({int(counts[layer_name].item())} tokens)")
        print(f"[rank0] peak memory {torch.cuda.max_memory_allocated(device) / 2**30:.1f} GiB")

    if world_size > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
