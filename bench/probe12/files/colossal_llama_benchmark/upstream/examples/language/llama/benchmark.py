import argparse
import resource
import time
from contextlib import nullcontext

import torch
from torch.utils.data import Dataset
from tqdm import tqdm
from transformers import AutoConfig, LlamaForCausalLM
from transformers.models.llama.configuration_llama import LlamaConfig

import colossalai
from colossalai.accelerator import get_accelerator
from colossalai.booster import Booster
from colossalai.booster.plugin import GeminiPlugin, HybridParallelPlugin, TorchFSDPPlugin
from colossalai.cluster import DistCoordinator
from colossalai.lazy import LazyInitContext
from colossalai.nn.optimizer import HybridAdam
from colossalai.shardformer import PipelineGradientCheckpointConfig

# ==============================
# Constants
# ==============================

MODEL_CONFIGS = {
    "7b": LlamaConfig(max_position_embeddings=4096),
    "13b": LlamaConfig(hidden_size=5120, intermediate_size=13824, num_hidden_layers=40,
                       num_attention_heads=40, max_position_embeddings=4096),
    "70b": LlamaConfig(hidden_size=8192, intermediate_size=28672, num_hidden_layers=80,
                       num_attention_heads=64, max_position_embeddings=4096, num_key_value_heads=8),
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
        return {"input_ids": self.input_ids[idx], "attention_mask": self.attention_mask[idx],
                "labels": self.input_ids[idx]}


def format_numel_str(numel: int) -> str:
    B, M, K = 1024 ** 3, 1024 ** 2, 1024
    if numel >= B:
        return f"{numel / B:.2f} B"
    elif numel >= M:
        return f"{numel / M:.2f} M"
    elif numel >= K:
        return f"{numel / K:.2f} K"
    return f"{numel}"


class PerformanceEvaluator:
    def __init__(self, model_numel, num_layers, hidden_size, vocab_size, enable_grad_checkpoint, ignore_steps, dp_world_size):
        self.model_numel = model_numel
        self.enable_grad_checkpoint = enable_grad_checkpoint
        self.ignore_steps = ignore_steps
        self.dp_world_size = dp_world_size
        self.num_layers, self.hidden_size, self.vocab_size = num_layers, hidden_size, vocab_size
        self.num_samples = 0
        self.flop = 0
        self.t = 0.0
        self.step = 0

    def on_step_start(self, step):
        torch.cuda.synchronize()
        self._start = time.time()

    def on_step_end(self, input_ids, **kwargs):
        torch.cuda.synchronize()  # wait for backward + step
        self.step += 1
        if self.step <= self.ignore_steps:
            return
        self.t += time.time() - self._start
        batch_size, seq_len = input_ids.shape
        self.num_samples += batch_size
        checkpoint_activations_factor = 4 if self.enable_grad_checkpoint else 3
        self.flop += batch_size * seq_len * self.model_numel * 2 * checkpoint_activations_factor

    def on_fit_end(self, coordinator):
        avg_throughput = self.num_samples * self.dp_world_size / (self.t + 1e-12)
        mp_world_size = coordinator.world_size // self.dp_world_size
        avg_tflops_per_gpu = self.flop / 1e12 / (self.t + 1e-12) / mp_world_size
        coordinator.print_on_master(f"num_samples: {self.num_samples}, dp_world_size: {self.dp_world_size}, "
                                    f"throughput: {avg_throughput:.2f} samples/s, TFLOPS per GPU: {avg_tflops_per_gpu:.2f}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("-c", "--config", type=str, default="7b")
    parser.add_argument("-p", "--plugin", choices=["gemini", "gemini_auto", "fsdp", "3d"], default="gemini")
    parser.add_argument("-b", "--batch_size", type=int, default=2)
    parser.add_argument("-s", "--num_steps", type=int, default=5)
    parser.add_argument("-i", "--ignore_steps", type=int, default=2)
    parser.add_argument("-g", "--grad_checkpoint", action="store_true")
    parser.add_argument("-l", "--max_length", type=int, default=4096)
    parser.add_argument("-x", "--xformers", action="store_true")
    parser.add_argument("-w", "--warmup_ratio", type=float, default=0.8)
    parser.add_argument("-m", "--memory_limit", type=int)
    parser.add_argument("--tp", type=int, default=1)
    parser.add_argument("--pp", type=int, default=1)
    parser.add_argument("--zero", type=int, default=0)
    parser.add_argument("--mbs", type=int, default=1)
    args = parser.parse_args()

    colossalai.launch_from_torch()
    coordinator = DistCoordinator()

    def empty_init():
        pass

    use_empty_init = True
    if args.plugin == "gemini":
        plugin = GeminiPlugin(precision="bf16", shard_param_frac=1.0, offload_optim_frac=0.0,
                              tp_size=args.tp, warmup_non_model_data_ratio=args.warmup_ratio,
                              enable_flash_attention=args.xformers, max_prefetch=10,
                              enable_async_reduce=True)
    elif args.plugin == "gemini_auto":
        plugin = GeminiPlugin(placement_policy="auto", precision="bf16",
                              warmup_non_model_data_ratio=args.warmup_ratio,
                              enable_flash_attention=args.xformers)
    elif args.plugin == "fsdp":
        plugin = TorchFSDPPlugin(mixed_precision=torch.distributed.fsdp.MixedPrecision(
            param_dtype=torch.float16, reduce_dtype=torch.float16, buffer_dtype=torch.float16))
    elif args.plugin == "3d":
        plugin = HybridParallelPlugin(
            tp_size=args.tp, pp_size=args.pp, zero_stage=args.zero, microbatch_size=args.mbs,
            enable_fused_normalization=torch.cuda.is_available(),
            enable_flash_attention=args.xformers, precision="bf16",
            gradient_checkpoint_config=PipelineGradientCheckpointConfig(num_ckpt_layers_per_stage=[19, 19, 19, 13])
            if args.grad_checkpoint else None)
    else:
        raise ValueError(f"Unknown plugin {args.plugin}")

    booster = Booster(plugin=plugin)
    dp_size = getattr(plugin, "dp_size", coordinator.world_size)

    config = MODEL_CONFIGS[args.config] if args.config in MODEL_CONFIGS else AutoConfig.from_pretrained(args.config)
    torch.cuda.manual_seed(42)
    dataset = RandomDataset(num_samples=args.batch_size * args.num_steps * dp_size, max_length=args.max_length,
                            vocab_size=config.vocab_size)
    dataloader = plugin.prepare_dataloader(dataset, batch_size=args.batch_size, shuffle=True, drop_last=True, seed=42)

    init_ctx = (LazyInitContext(default_device=get_accelerator().get_current_device())
                if isinstance(plugin, (GeminiPlugin, HybridParallelPlugin)) else nullcontext())
    with init_ctx:
        model = LlamaForCausalLM(config)
    if args.grad_checkpoint:
        model.gradient_checkpointing_enable()

    model_numel = sum(p.numel() for p in model.parameters())
    performance_evaluator = PerformanceEvaluator(model_numel, config.num_hidden_layers, config.hidden_size,
                                                 config.vocab_size, args.grad_checkpoint, args.ignore_steps,
                                                 dp_world_size=dp_size)
    optimizer = HybridAdam(model.parameters())
    torch.set_default_dtype(torch.bfloat16)
    model, optimizer, _, dataloader, _ = booster.boost(model, optimizer, dataloader=dataloader)
    torch.set_default_dtype(torch.float)
    coordinator.print_on_master(f"Booster init max CUDA memory: {torch.cuda.max_memory_allocated()/1024**2:.2f} MB")
    coordinator.print_on_master(
        f"Booster init max CPU memory: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss/1024:.2f} MB")

    for step, batch in enumerate(tqdm(dataloader, desc="Step", disable=not coordinator.is_master())):
        performance_evaluator.on_step_start(step)
        outputs = model(**batch)
        loss = outputs[0]
        booster.backward(loss, optimizer)
        optimizer.step()
        optimizer.zero_grad()
        performance_evaluator.on_step_end(**batch)

    performance_evaluator.on_fit_end(coordinator)
    coordinator.print_on_master(f"Max CUDA memory usage: {get_accelerator().max_memory_allocated()/1024**2:.2f} MB")


if __name__ == "__main__":
    main()
