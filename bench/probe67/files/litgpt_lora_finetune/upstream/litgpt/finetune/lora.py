# Copyright Lightning AI. Licensed under the Apache License 2.0, see LICENSE file.
import dataclasses
import math
import os
import time
from pathlib import Path
from pprint import pprint
from typing import Dict, List, Literal, Optional, Tuple, Union

import lightning as L
import torch
from lightning.fabric.plugins import BitsandbytesPrecision
from lightning.fabric.strategies import FSDPStrategy
from lightning.fabric.utilities import ThroughputMonitor
from torch.utils.data import DataLoader

from litgpt.lora import GPT, Block, Config, lora_filter, mark_only_lora_as_trainable
from litgpt.tokenizer import Tokenizer
from litgpt.utils import (
    CycleIterator,
    check_valid_checkpoint_dir,
    chunked_cross_entropy,
    get_default_supported_precision,
    load_checkpoint,
    num_parameters,
)


def setup(
    checkpoint_dir: Path,
    out_dir: Path = Path("out/finetune/lora"),
    precision: Optional[str] = None,
    quantize: Optional[Literal["bnb.nf4", "bnb.nf4-dq", "bnb.fp4", "bnb.fp4-dq", "bnb.int8-training"]] = None,
    devices: Union[int, str] = 1,
    num_nodes: int = 1,
    lora_r: int = 8,
    lora_alpha: int = 16,
    lora_dropout: float = 0.05,
    micro_batch_size: int = 1,
    global_batch_size: int = 16,
    max_steps: int = 1000,
    learning_rate: float = 3e-4,
    seed: int = 1337,
) -> None:
    pprint(locals())
    precision = precision or get_default_supported_precision(training=True)
    check_valid_checkpoint_dir(checkpoint_dir)
    config = Config.from_file(checkpoint_dir / "model_config.yaml", lora_r=lora_r, lora_alpha=lora_alpha,
                              lora_dropout=lora_dropout, lora_query=True, lora_value=True)

    plugins = None
    if quantize is not None and quantize.startswith("bnb."):
        if "mixed" in precision:
            raise ValueError("Quantization and mixed precision is not supported.")
        dtype = {"16-true": torch.float16, "bf16-true": torch.bfloat16, "32-true": torch.float32}[precision]
        plugins = BitsandbytesPrecision(quantize[4:], dtype)
        precision = None

    if devices * num_nodes > 1:
        if quantize:
            raise NotImplementedError("Quantization is currently not supported for multi-GPU training. "
                                      "Please set devices=1 and num_nodes=1 when using the --quantize flag.")
        strategy = FSDPStrategy(auto_wrap_policy={Block}, activation_checkpointing_policy={Block},
                                state_dict_type="full", limit_all_gathers=True, cpu_offload=False)
    else:
        strategy = "auto"

    fabric = L.Fabric(devices=devices, num_nodes=num_nodes, strategy=strategy, precision=precision, plugins=plugins,
                      accelerator="cuda")

    if torch.cuda.is_available() and devices > 1:
        check_nvlink_connectivity(fabric)

    fabric.launch(main, devices, seed, config, checkpoint_dir, out_dir, micro_batch_size, global_batch_size,
                  max_steps, learning_rate)


def main(fabric: L.Fabric, devices: int, seed: int, config: Config, checkpoint_dir: Path, out_dir: Path,
         micro_batch_size: int, global_batch_size: int, max_steps: int, learning_rate: float) -> None:
    fabric.seed_everything(seed)
    tokenizer = Tokenizer(checkpoint_dir)
    train_dataloader = get_dataloader(fabric, tokenizer, micro_batch_size)

    checkpoint_path = checkpoint_dir / "lit_model.pth"
    with fabric.init_module(empty_init=(devices > 1)):
        model = GPT(config)
    mark_only_lora_as_trainable(model)

    fabric.print(f"Number of trainable parameters: {num_parameters(model, requires_grad=True):,}")
    fabric.print(f"Number of non-trainable parameters: {num_parameters(model, requires_grad=False):,}")

    model = fabric.setup_module(model)
    if isinstance(fabric.strategy.precision, BitsandbytesPrecision):
        import bitsandbytes as bnb
        optimizer_cls = bnb.optim.PagedAdamW
    else:
        optimizer_cls = torch.optim.AdamW
    optimizer = optimizer_cls(model.parameters(), lr=learning_rate, weight_decay=0.02, betas=(0.9, 0.95))
    optimizer = fabric.setup_optimizers(optimizer)
    load_checkpoint(fabric, model, checkpoint_path, strict=False)

    train_time = time.perf_counter()
    fit(fabric, model, optimizer, train_dataloader, devices, global_batch_size, micro_batch_size, max_steps)
    fabric.print(f"Training time: {(time.perf_counter() - train_time):.2f}s")
    if fabric.device.type == "cuda":
        fabric.print(f"Memory used: {torch.cuda.max_memory_allocated() / 1e9:.02f} GB")

    save_path = out_dir / "final" / "lit_model.pth.lora"
    save_path.parent.mkdir(parents=True, exist_ok=True)
    fabric.save(save_path, {"model": model}, filter={"model": lora_filter})


def fit(fabric, model, optimizer, train_dataloader, devices, global_batch_size, micro_batch_size, max_steps):
    gradient_accumulation_iters = global_batch_size // devices // micro_batch_size
    throughput = ThroughputMonitor(fabric, window_size=50)
    iterator = CycleIterator(train_dataloader)
    step_count = 0
    iter_num = 0
    total_t0 = time.perf_counter()
    while step_count < max_steps:
        iter_num += 1
        iter_t0 = time.perf_counter()
        batch = next(iterator)
        input_ids, targets = batch["input_ids"], batch["labels"]
        is_accumulating = iter_num % gradient_accumulation_iters != 0
        with fabric.no_backward_sync(model, enabled=is_accumulating):
            logits = model(input_ids, lm_head_chunk_size=128)
            logits[-1] = logits[-1][..., :-1, :]
            loss = chunked_cross_entropy(logits, targets[..., 1:])
            fabric.backward(loss / gradient_accumulation_iters)
        if not is_accumulating:
            optimizer.step()
            optimizer.zero_grad()
            step_count += 1
        if iter_num % 10 == 0:
            loss_item = loss.item()
            t1 = time.perf_counter()
            throughput.update(time=t1 - total_t0, batches=iter_num, samples=iter_num * micro_batch_size,
                              lengths=iter_num * micro_batch_size * input_ids.size(1))
            throughput.compute_and_log(step=iter_num)
            fabric.print(f"iter {iter_num} step {step_count}: loss {loss_item:.4f}, iter time: {(t1 - iter_t0) * 1000:.2f} ms")


def get_dataloader(fabric, tokenizer, micro_batch_size):
    data = torch.load("data/alpaca/train.pt")
    loader = DataLoader(data, batch_size=micro_batch_size, shuffle=True, num_workers=2, pin_memory=True)
    return fabric.setup_dataloaders(loader)


def check_nvlink_connectivity(fabric=None):
    """Checks GPU connectivity for both NVIDIA and AMD GPUs."""
    custom_print = fabric.print if fabric is not None else print
    if os.getenv("RANK", "0") != "0":
        return
    try:
        if torch.cuda.is_available():
            device_properties = torch.cuda.get_device_properties(0)
            gpu_name = device_properties.name.lower()
            if "nvidia" in gpu_name:
                import subprocess
                result = subprocess.run(["nvidia-smi", "topo", "-m"], stdout=subprocess.PIPE, text=True)
                custom_print(result.stdout)
    except Exception as e:
        custom_print(f"An error occurred while checking GPU connectivity: {e}")


if __name__ == "__main__":
    torch.set_float32_matmul_precision("high")
    from jsonargparse import CLI
    CLI(setup)
