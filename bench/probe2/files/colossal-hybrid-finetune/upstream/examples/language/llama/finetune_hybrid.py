"""Fine-tune a causal LM with ColossalAI's Booster + HybridParallelPlugin (synthetic imitation)."""
import argparse
import resource
import time
from contextlib import nullcontext

import torch
import torch.distributed as dist
from torch.utils.data import Dataset
from tqdm import tqdm
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

import colossalai
from colossalai.accelerator import get_accelerator
from colossalai.booster import Booster
from colossalai.booster.plugin import GeminiPlugin, HybridParallelPlugin, TorchFSDPPlugin
from colossalai.cluster import DistCoordinator
from colossalai.lazy import LazyInitContext
from colossalai.nn.lr_scheduler import CosineAnnealingWarmupLR
from colossalai.nn.optimizer import HybridAdam

MODEL_CONFIGS = {
    "7b": dict(hidden_size=4096, intermediate_size=11008, num_hidden_layers=32, num_attention_heads=32),
    "13b": dict(hidden_size=5120, intermediate_size=13824, num_hidden_layers=40, num_attention_heads=40),
}


class RandomDataset(Dataset):
    def __init__(self, num_samples: int = 1000, max_length: int = 2048, vocab_size: int = 32000):
        self.num_samples = num_samples
        self.max_length = max_length
        self.input_ids = torch.randint(0, vocab_size, (num_samples, max_length),
                                       device=get_accelerator().get_current_device())
        self.attention_mask = torch.ones_like(self.input_ids)

    def __len__(self):
        return self.num_samples

    def __getitem__(self, idx):
        return {
            "input_ids": self.input_ids[idx],
            "attention_mask": self.attention_mask[idx],
            "labels": self.input_ids[idx],
        }


def get_model_numel(model: torch.nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def format_numel_str(numel: int) -> str:
    B = 1024**3
    M = 1024**2
    K = 1024
    if numel >= B:
        return f"{numel / B:.2f} B"
    elif numel >= M:
        return f"{numel / M:.2f} M"
    elif numel >= K:
        return f"{numel / K:.2f} K"
    else:
        return f"{numel}"


def all_reduce_mean(tensor: torch.Tensor) -> torch.Tensor:
    dist.all_reduce(tensor=tensor, op=dist.ReduceOp.SUM)
    tensor.div_(dist.get_world_size())
    return tensor


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("-c", "--config", type=str, default="7b", help="Model configuration")
    parser.add_argument("-p", "--plugin", choices=["gemini", "3d", "fsdp"], default="3d")
    parser.add_argument("-b", "--batch_size", type=int, default=2)
    parser.add_argument("-s", "--num_steps", type=int, default=20)
    parser.add_argument("-l", "--max_length", type=int, default=4096)
    parser.add_argument("-g", "--grad_checkpoint", action="store_true")
    parser.add_argument("-x", "--xformers", action="store_true", help="Use xformers / flash attention")
    parser.add_argument("--tp", type=int, default=1)
    parser.add_argument("--pp", type=int, default=1)
    parser.add_argument("--zero", type=int, default=1)
    parser.add_argument("--mixed_precision", type=str, default="bf16", choices=["fp16", "bf16"])
    parser.add_argument("--lr", type=float, default=3e-4)
    return parser.parse_args()


def main():
    args = parse_args()

    # ==============================
    # Launch Distributed Environment
    # ==============================
    colossalai.launch_from_torch()
    coordinator = DistCoordinator()

    # ==============================
    # Initialize Booster
    # ==============================
    if args.plugin == "gemini":
        plugin = GeminiPlugin(precision=args.mixed_precision, initial_scale=2**16, max_norm=1.0,
                              placement_policy="static", enable_flash_attention=args.xformers)
    elif args.plugin == "fsdp":
        plugin = TorchFSDPPlugin(mixed_precision=None)
    else:
        plugin = HybridParallelPlugin(
            tp_size=args.tp,
            pp_size=args.pp,
            zero_stage=args.zero,
            microbatch_size=1,
            precision=args.mixed_precision,
            enable_fused_normalization=True,
            enable_flash_attention=args.xformers,
            initial_scale=2**16,
            max_norm=1.0,
        )
    booster = Booster(plugin=plugin)

    # ==============================
    # Initialize Model and Optimizer
    # ==============================
    config = AutoConfig.from_pretrained("meta-llama/Llama-2-7b-hf", **MODEL_CONFIGS[args.config])
    init_ctx = (
        LazyInitContext(default_device=get_accelerator().get_current_device())
        if isinstance(plugin, (GeminiPlugin, HybridParallelPlugin))
        else nullcontext()
    )
    with init_ctx:
        model = AutoModelForCausalLM.from_config(config, torch_dtype=torch.bfloat16,
                                                 attn_implementation="flash_attention_2")
    if args.grad_checkpoint:
        model.gradient_checkpointing_enable()

    model_numel = get_model_numel(model)
    coordinator.print_on_master(f"Model params: {format_numel_str(model_numel)}")

    dataset = RandomDataset(num_samples=args.batch_size * args.num_steps * coordinator.world_size,
                            max_length=args.max_length, vocab_size=config.vocab_size)
    dataloader = plugin.prepare_dataloader(dataset, batch_size=args.batch_size, shuffle=True, drop_last=True,
                                           seed=42, pin_memory=True)

    optimizer = HybridAdam(model.parameters(), lr=args.lr, weight_decay=0.0)
    lr_scheduler = CosineAnnealingWarmupLR(optimizer, total_steps=args.num_steps, warmup_steps=2)

    torch.set_default_dtype(torch.bfloat16)
    model, optimizer, _, dataloader, lr_scheduler = booster.boost(model, optimizer, dataloader=dataloader,
                                                                  lr_scheduler=lr_scheduler)
    torch.set_default_dtype(torch.float)

    coordinator.print_on_master(f"Booster init max CUDA memory: {torch.cuda.max_memory_allocated() / 1024**2:.2f} MB")
    coordinator.print_on_master(
        f"Booster init max CPU memory: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.2f} MB")

    # ==============================
    # Train
    # ==============================
    model.train()
    start = time.time()
    for step, batch in enumerate(tqdm(dataloader, desc="Step", disable=not coordinator.is_master())):
        outputs = model(**batch)
        loss = outputs[0]
        booster.backward(loss, optimizer)
        optimizer.step()
        lr_scheduler.step()
        optimizer.zero_grad()
        torch.cuda.synchronize()
        if step % 5 == 0:
            loss = all_reduce_mean(loss.detach().float())
            coordinator.print_on_master(f"step {step}: loss {loss.item():.4f}")

    elapsed = time.time() - start
    coordinator.print_on_master(f"Throughput: {args.num_steps * args.batch_size * coordinator.world_size / elapsed:.2f} samples/s")
    coordinator.print_on_master(f"Max CUDA memory usage: {torch.cuda.max_memory_allocated() / 1024**2:.2f} MB")


if __name__ == "__main__":
    main()
