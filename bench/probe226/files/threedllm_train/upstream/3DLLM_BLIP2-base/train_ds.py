"""
DeepSpeed (ZeRO-2) training entry for 3D-LLM with a Flan-T5-XL / OPT backbone.

    deepspeed --num_gpus 8 train_ds.py --cfg-path lavis/projects/blip2/train/3dvqa_ft.yaml
"""
import argparse
import json
import logging
import os
import random
import time
from collections import defaultdict

import numpy as np
import torch
import torch.backends.cudnn as cudnn
import deepspeed
from deepspeed.ops.adam import FusedAdam, DeepSpeedCPUAdam

import lavis.tasks as tasks
from lavis.common.config import Config
from lavis.common.dist_utils import get_rank, get_world_size, is_main_process
from lavis.common.logger import setup_logger
from lavis.common.registry import registry
from lavis.common.utils import now

# imports modules for registration
from lavis.datasets.builders import *
from lavis.models import *
from lavis.processors import *
from lavis.tasks import *


def parse_args():
    parser = argparse.ArgumentParser(description="3D-LLM DeepSpeed training")

    parser.add_argument("--cfg-path", required=True, help="path to configuration file.")
    parser.add_argument(
        "--options",
        nargs="+",
        help="override some settings in the used config, the key-value pair "
        "in xxx=yyy format will be merged into config file (deprecate), "
        "change to --cfg-options instead.",
    )
    parser.add_argument("--local_rank", type=int, default=-1, help="filled in by the deepspeed launcher")
    parser.add_argument("--offload", action="store_true", help="ZeRO-Offload the optimizer states to CPU")
    parser.add_argument("--zero_stage", type=int, default=2)
    parser.add_argument("--debug", action="store_true", help="synchronous kernel launches for debugging")
    parser = deepspeed.add_config_arguments(parser)

    args = parser.parse_args()
    return args


def setup_seeds(config):
    seed = config.run_cfg.seed + get_rank()

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)

    cudnn.benchmark = False
    cudnn.deterministic = True


def get_ds_config(args, cfg, world_size):
    run_cfg = cfg.run_cfg
    micro_bs = run_cfg.batch_size_train
    accum = run_cfg.get("accum_grad_iters", 1)
    return {
        "train_batch_size": micro_bs * accum * world_size,
        "train_micro_batch_size_per_gpu": micro_bs,
        "gradient_accumulation_steps": accum,
        "gradient_clipping": 1.0,
        "steps_per_print": 50,
        "bf16": {"enabled": run_cfg.get("bf16", True)},
        "fp16": {"enabled": False},
        "zero_optimization": {
            "stage": args.zero_stage,
            "offload_optimizer": {
                "device": "cpu" if args.offload else "none",
                "pin_memory": True,
            },
            "allgather_partitions": True,
            "allgather_bucket_size": 5e8,
            "reduce_scatter": True,
            "reduce_bucket_size": 5e8,
            "overlap_comm": True,
            "contiguous_gradients": True,
        },
        "wall_clock_breakdown": False,
    }


def apply_to_sample(f, sample):
    if len(sample) == 0:
        return {}

    def _apply(x):
        if torch.is_tensor(x):
            return f(x)
        elif isinstance(x, dict):
            return {key: _apply(value) for key, value in x.items()}
        elif isinstance(x, list):
            return [_apply(x) for x in x]
        else:
            return x

    return _apply(sample)


def move_to_cuda(sample):
    def _move_to_cuda(tensor):
        return tensor.cuda()

    return apply_to_sample(_move_to_cuda, sample)


def prepare_sample(samples, cuda_enabled=True):
    if cuda_enabled:
        samples = move_to_cuda(samples)

    # TODO fp16 support

    return samples


def build_optimizer(args, cfg, model):
    lr_scale = cfg.run_cfg.get("lr_layer_decay", 1)
    weight_decay = cfg.run_cfg.get("weight_decay", 0.05)
    p_wd, p_non_wd = [], []
    for n, p in model.named_parameters():
        if not p.requires_grad:
            continue  # frozen weights
        if p.ndim < 2 or "bias" in n or "ln" in n or "bn" in n:
            p_non_wd.append(p)
        else:
            p_wd.append(p)
    optim_params = [
        {"params": p_wd, "weight_decay": weight_decay},
        {"params": p_non_wd, "weight_decay": 0},
    ]
    beta2 = cfg.run_cfg.get("beta2", 0.999)
    if args.offload:
        optimizer = DeepSpeedCPUAdam(optim_params, lr=float(cfg.run_cfg.init_lr), betas=(0.9, beta2))
    else:
        optimizer = FusedAdam(optim_params, lr=float(cfg.run_cfg.init_lr), betas=(0.9, beta2))
    return optimizer


def main():
    args = parse_args()
    if args.debug:
        os.environ["CUDA_LAUNCH_BLOCKING"] = "1"

    cfg = Config(args)

    deepspeed.init_distributed(dist_backend="nccl")
    local_rank = int(os.environ.get("LOCAL_RANK", args.local_rank))
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    cuda_enabled = device.type == "cuda"

    setup_seeds(cfg)
    setup_logger()
    cfg.pretty_print()

    task = tasks.setup_task(cfg)
    datasets = task.build_datasets(cfg)
    model = task.build_model(cfg)

    train_dataset = datasets[list(datasets.keys())[0]]["train"]
    world_size = get_world_size()
    ds_config = get_ds_config(args, cfg, world_size)
    optimizer = build_optimizer(args, cfg, model)

    model_engine, optimizer, train_loader, _ = deepspeed.initialize(
        model=model,
        optimizer=optimizer,
        config=ds_config,
        training_data=train_dataset,
        collate_fn=train_dataset.collater,
    )

    output_dir = os.path.join(cfg.run_cfg.output_dir, now())
    os.makedirs(output_dir, exist_ok=True)
    log_freq = cfg.run_cfg.get("log_freq", 50)
    max_epoch = int(cfg.run_cfg.max_epoch)
    global_step = 0
    for epoch in range(max_epoch):
        model_engine.train()
        stats = defaultdict(float)
        tic = time.time()
        for step, samples in enumerate(train_loader):
            samples = prepare_sample(samples, cuda_enabled=cuda_enabled)
            samples.update({"epoch": epoch, "iters": step})
            # point features come in fp32 from the loader; autocast casts them for the bf16 engine
            with torch.cuda.amp.autocast(dtype=torch.bfloat16):
                loss = model_engine(samples)["loss"]
            model_engine.backward(loss)
            model_engine.step()

            stats["loss"] += loss.item()
            global_step += 1
            if step % log_freq == 0 and is_main_process():
                elapsed = time.time() - tic
                logging.info(
                    "epoch {} step {} loss {:.4f} lr {:.2e} {:.2f}s/it max_mem {:.0f}MB".format(
                        epoch, step, stats["loss"] / (step + 1),
                        optimizer.param_groups[0]["lr"],
                        elapsed / max(step, 1),
                        torch.cuda.max_memory_allocated() / 1024 ** 2,
                    )
                )

        # ZeRO checkpoints are sharded: every rank has to call save_checkpoint
        model_engine.save_checkpoint(output_dir, tag=f"epoch_{epoch}")
        if is_main_process():
            with open(os.path.join(output_dir, "log.txt"), "a") as f:
                f.write(json.dumps({"epoch": epoch, "loss": stats["loss"] / max(len(train_loader), 1)}) + "\n")


if __name__ == "__main__":
    main()
