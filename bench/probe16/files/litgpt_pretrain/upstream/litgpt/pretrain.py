# Copyright Lightning AI. Licensed under the Apache License 2.0, see LICENSE file.

import math
import pprint
import time
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import Dict, Optional, Tuple, Union

import lightning as L
import torch
import torch.nn as nn
from lightning.fabric.strategies import FSDPStrategy
from lightning.fabric.utilities.throughput import ThroughputMonitor, measure_flops
from torch.utils.data import DataLoader
from torchmetrics.aggregation import RunningMean

from litgpt import Tokenizer
from litgpt.args import EvalArgs, LogArgs, TrainArgs
from litgpt.config import name_to_config
from litgpt.data import DataModule, TinyLlama
from litgpt.model import GPT, Block, CausalSelfAttention, Config, LLaMAMLP
from litgpt.utils import (
    CycleIterator,
    capture_hparams,
    choose_logger,
    chunked_cross_entropy,
    init_out_dir,
    num_parameters,
    parse_devices,
    reset_parameters,
)


def setup(
    model_name: str = "tiny-llama-1.1b",
    out_dir: Path = Path("out/pretrain"),
    precision: Optional[str] = None,
    devices: Union[int, str] = "auto",
    num_nodes: int = 1,
    seed: int = 42,
    train: TrainArgs = TrainArgs(save_interval=1000, log_interval=1, global_batch_size=512, micro_batch_size=4,
                                 max_tokens=int(3e12), lr_warmup_steps=2000, max_norm=1.0, min_lr=4e-5),
    logger_name: str = "tensorboard",
) -> None:
    """Pretrain a model.

    Arguments:
        devices: How many devices/GPUs to use. Uses all GPUs by default.
        precision: The precision to use for finetuning. Determines a compatible precision setting by default.
    """
    hparams = capture_hparams()
    config = Config.from_name(model_name)
    precision = precision or get_default_supported_precision(training=True)
    devices = parse_devices(devices)
    out_dir = init_out_dir(out_dir)
    logger = choose_logger(logger_name, out_dir, name=f"pretrain-{config.name}", log_interval=train.log_interval)

    if devices * num_nodes > 1:
        strategy = FSDPStrategy(auto_wrap_policy={Block}, state_dict_type="full", sharding_strategy="HYBRID_SHARD")
    else:
        strategy = "auto"

    fabric = L.Fabric(
        accelerator="cuda", devices=devices, num_nodes=num_nodes, strategy=strategy, precision=precision, loggers=[logger]
    )

    if torch.cuda.is_available() and devices > 1:
        check_nvlink_connectivity(fabric)

    fabric.launch()
    fabric.print(pprint.pformat(hparams))
    main(fabric, devices, seed, config, out_dir, train)


def get_default_supported_precision(training: bool) -> str:
    """Return default precision that is supported by the hardware: either `bf16` or `16`."""
    if torch.cuda.is_available() and torch.cuda.is_bf16_supported():
        return "bf16-mixed" if training else "bf16-true"
    return "16-mixed" if training else "16-true"


def check_nvlink_connectivity(fabric):
    """Checks GPU connectivity for both NVIDIA and AMD GPUs."""
    if fabric.global_rank == 0:
        import subprocess

        result = subprocess.run(["nvidia-smi", "topo", "-m"], stdout=subprocess.PIPE, text=True)
        if result.returncode != 0:
            fabric.print("Failed to run nvidia-smi")
            return
        lines = result.stdout.strip().split("\n")
        start_index = next((i for i, line in enumerate(lines) if "GPU0" in line), None) + 1
        gpu_matrix = [line.split()[1:] for line in lines[start_index:] if line.startswith("GPU")]
        all_nvlink = all("NV" in cell for row in gpu_matrix for cell in row if cell != "X")
        if all_nvlink:
            fabric.print("All GPUs are fully connected via NVLink.")
        else:
            fabric.print("Warning: Not all GPUs are fully connected via NVLink. Training may be slower.")


def main(fabric, devices, seed, config, out_dir, train):
    fabric.seed_everything(seed)
    t0 = time.perf_counter()
    with fabric.init_module(empty_init=True):
        model = GPT(config)
    model = torch.compile(model)
    model = fabric.setup(model)
    fabric.print(f"Time to instantiate model: {time.perf_counter() - t0:.02f} seconds.")
    fabric.print(f"Total parameters: {num_parameters(model):,}")

    optimizer = torch.optim.AdamW(model.parameters(), lr=4e-4, weight_decay=0.1, betas=(0.9, 0.95), fused=True)
    optimizer = fabric.setup_optimizers(optimizer)

    data = TinyLlama()
    data.connect(tokenizer=Tokenizer("checkpoints/meta-llama/Llama-2-7b-hf"), batch_size=train.micro_batch_size,
                 max_seq_length=config.block_size)
    with fabric.rank_zero_first():
        data.prepare_data()
    data.setup()
    train_dataloader = fabric.setup_dataloaders(data.train_dataloader())

    with torch.device("meta"):
        meta_model = GPT(model.config)
        x = torch.randint(0, 1, (train.micro_batch_size, meta_model.config.block_size))
        model_fwd = lambda: meta_model(x)
        model_loss = lambda y: chunked_cross_entropy(y, x, chunk_size=0)
        measured_flops = measure_flops(meta_model, model_fwd, model_loss)
        fabric.print(f"Measured TFLOPs: {measured_flops * fabric.world_size / 1e12:.2f}")
        del meta_model, x

    throughput = ThroughputMonitor(fabric, window_size=5)
    running_loss = RunningMean(window=train.gradient_accumulation_iters(devices), sync_on_compute=False).to(fabric.device)
    fabric.barrier()
    total_t0 = time.perf_counter()
    train_iterator = CycleIterator(train_dataloader)

    for iter_num, train_data in enumerate(train_iterator):
        if iter_num >= train.max_iters(devices):
            break
        input_ids = train_data[:, 0 : model.config.block_size].contiguous().long()
        targets = train_data[:, 1 : (model.config.block_size + 1)].contiguous().long()
        is_accumulating = (iter_num + 1) % train.gradient_accumulation_iters(devices) != 0
        with fabric.no_backward_sync(model, enabled=is_accumulating):
            logits = model(input_ids)
            loss = chunked_cross_entropy(logits, targets)
            fabric.backward(loss / train.gradient_accumulation_iters(devices))
        running_loss.update(loss.detach())
        if not is_accumulating:
            fabric.clip_gradients(model, optimizer, max_norm=train.max_norm)
            optimizer.step()
            optimizer.zero_grad()
        if iter_num % train.log_interval == 0:
            loss = running_loss.compute().item()
            t1 = time.perf_counter()
            throughput.update(time=t1 - total_t0, flops=measured_flops * train.log_interval,
                              batches=iter_num, samples=iter_num * train.micro_batch_size)
            metrics = {"loss": loss, "iter": iter_num, "remaining_time": t1 - total_t0}
            throughput.compute_and_log(step=iter_num)
            fabric.log_dict(metrics, step=iter_num)
            fabric.print(f"iter {iter_num}: loss {loss:.4f}")

    fabric.print(f"Training time: {(time.perf_counter()-total_t0):.2f}s")
    if fabric.device.type == "cuda":
        fabric.print(f"Memory used: {torch.cuda.max_memory_allocated() / 1e9:.02f} GB")


if __name__ == "__main__":
    torch.set_float32_matmul_precision("high")
    torch.backends.cuda.matmul.allow_tf32 = True
    setup()
