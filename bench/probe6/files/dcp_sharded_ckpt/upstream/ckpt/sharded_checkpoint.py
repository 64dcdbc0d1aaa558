"""Sharded save/load of an FSDP2 (fully_shard) model with torch.distributed.checkpoint (DCP).

Each rank writes only its own shards; loading reshards automatically when the world size changes.
Also converts a DCP checkpoint into a single consolidated torch.save file for inference.
"""
import argparse
import os
import shutil
import time

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch.distributed._composable.fsdp import MixedPrecisionPolicy, fully_shard
from torch.distributed.checkpoint.format_utils import dcp_to_torch_save
from torch.distributed.checkpoint.state_dict import StateDictOptions, get_state_dict, set_state_dict
from torch.distributed.checkpoint.stateful import Stateful
from torch.distributed.device_mesh import init_device_mesh

from model import Transformer, TransformerConfig


class AppState(Stateful):
    """Wraps model + optimizer so dcp.save/dcp.load call get/set_state_dict for us."""

    def __init__(self, model, optimizer=None, step: int = 0):
        self.model = model
        self.optimizer = optimizer
        self.step = step

    def state_dict(self):
        model_sd, optim_sd = get_state_dict(self.model, self.optimizer)
        return {"model": model_sd, "optim": optim_sd, "step": self.step}

    def load_state_dict(self, state_dict):
        set_state_dict(self.model, self.optimizer, model_state_dict=state_dict["model"],
                       optim_state_dict=state_dict["optim"])
        self.step = state_dict["step"]


def setup():
    dist.init_process_group("cuda:nccl,cpu:gloo")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    mesh = init_device_mesh("cuda", (dist.get_world_size(),), mesh_dim_names=("dp",))
    return local_rank, mesh


def build(mesh, cfg: TransformerConfig):
    with torch.device("meta"):
        model = Transformer(cfg)
    mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    for block in model.layers:
        fully_shard(block, mesh=mesh, mp_policy=mp)
    fully_shard(model, mesh=mesh, mp_policy=mp)
    model.to_empty(device="cuda")
    model.init_weights()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=True)
    return model, optimizer


def save(ckpt_dir: str, app: AppState, async_save: bool = False, keep: int = 3):
    path = os.path.join(ckpt_dir, f"step-{app.step:08d}")
    t0 = time.perf_counter()
    if async_save:
        fut = dcp.async_save({"app": app}, checkpoint_id=path)
    else:
        dcp.save({"app": app}, checkpoint_id=path)
        fut = None
    if dist.get_rank() == 0:
        print(f"saved {path} in {time.perf_counter() - t0:.1f}s")
        ckpts = sorted(d for d in os.listdir(ckpt_dir) if d.startswith("step-"))
        for old in ckpts[:-keep]:
            shutil.rmtree(os.path.join(ckpt_dir, old), ignore_errors=True)
    return fut


def load_latest(ckpt_dir: str, app: AppState) -> bool:
    if not os.path.isdir(ckpt_dir):
        return False
    ckpts = sorted(d for d in os.listdir(ckpt_dir) if d.startswith("step-"))
    if not ckpts:
        return False
    dcp.load({"app": app}, checkpoint_id=os.path.join(ckpt_dir, ckpts[-1]))
    return True


def consolidate(ckpt_path: str, out_file: str):
    """Offline, single process: DCP directory -> one torch.save file (model weights only)."""
    tmp = out_file + ".full"
    dcp_to_torch_save(ckpt_path, tmp)
    full = torch.load(tmp, map_location="cpu", weights_only=False)
    torch.save(full["app"]["model"], out_file)
    os.remove(tmp)


def train(args):
    local_rank, mesh = setup()
    cfg = TransformerConfig(dim=args.dim, n_layers=args.layers, n_heads=args.heads, vocab_size=32000)
    model, optimizer = build(mesh, cfg)
    app = AppState(model, optimizer)
    if load_latest(args.ckpt_dir, app) and dist.get_rank() == 0:
        print(f"resumed from step {app.step}")
    pending = None
    for step in range(app.step, args.steps):
        tokens = torch.randint(0, cfg.vocab_size, (args.batch, args.seq + 1), device="cuda")
        logits = model(tokens[:, :-1])
        loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1).float(), tokens[:, 1:].flatten())
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        app.step = step + 1
        if app.step % args.save_every == 0:
            if pending is not None:
                pending.result()
            pending = save(args.ckpt_dir, app, async_save=args.async_save)
    if pending is not None:
        pending.result()
    torch.cuda.synchronize()
    dist.destroy_process_group()


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--ckpt_dir", default="checkpoints")
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--save_every", type=int, default=200)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=2048)
    p.add_argument("--dim", type=int, default=2048)
    p.add_argument("--layers", type=int, default=16)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--async_save", action="store_true")
    p.add_argument("--consolidate", default=None, help="convert this DCP dir to a single file and exit")
    args = p.parse_args()
    if args.consolidate:
        consolidate(args.consolidate, args.consolidate.rstrip("/") + ".pt")
    else:
        train(args)
