"""Benchmark scaled_dot_product_attention backends against a composite nn.MultiheadAttention.

    python benchmarks/transformer/sdp.py --dtype bfloat16 --output sdp.csv

Uses torch.utils.benchmark so that timings are taken with blocked_autorange and reported as medians.
"""
import argparse
import csv
import itertools
import random
from collections import defaultdict
from dataclasses import asdict, dataclass
from typing import List, Tuple

import torch
import torch.nn.functional as F
import torch.utils.benchmark as benchmark
from tabulate import tabulate
from torch.backends.cuda import sdp_kernel
from tqdm import tqdm

DEVICE = "cuda"


@dataclass(frozen=True)
class ExperimentConfig:
    batch_size: int
    num_heads: int
    max_sequence_len: int
    embed_dimension: int
    dtype: torch.dtype
    pad_percentage: float
    enable_math: bool
    enable_flash: bool
    enable_mem_efficient: bool

    def get_entries(self) -> List:
        return [self.batch_size, self.num_heads, self.max_sequence_len, self.embed_dimension,
                str(self.dtype), self.pad_percentage, self.enable_math, self.enable_flash,
                self.enable_mem_efficient]

    @classmethod
    def get_entry_names(cls) -> List[str]:
        return ["batch_size", "num_heads", "max_sequence_len", "embed_dimension", "dtype",
                "pad_percentage", "enable_math", "enable_flash", "enable_mem_efficient"]


@dataclass(frozen=True)
class ExperimentResults:
    nn_mha_time: float
    compiled_nn_mha_time: float
    composite_mha_time: float
    compiled_composite_mha_time: float

    def get_entries(self) -> List:
        return [f"{self.nn_mha_time:2f}", f"{self.compiled_nn_mha_time:2f}",
                f"{self.composite_mha_time:2f}", f"{self.compiled_composite_mha_time:2f}"]

    @classmethod
    def get_entry_names(cls) -> List[str]:
        return ["nn_mha_time (\u00B5s)", "compiled_nn_mha_time (\u00B5s)",
                "composite_mha_time (\u00B5s)", "compiled_composite_mha_time (\u00B5s)"]


class CompositeMHA(torch.nn.Module):
    def __init__(self, num_heads, in_proj_weight, in_proj_bias, out_proj):
        super().__init__()
        self.in_proj_weight = in_proj_weight
        self.in_proj_bias = in_proj_bias
        self.out_proj = out_proj
        self.num_heads = num_heads

    def forward(self, query, key, value, mask):
        query_projected = F.linear(query, self.in_proj_weight, self.in_proj_bias)
        batch_size = query_projected.size(0)
        embed_dim = query_projected.size(2)
        head_dim = embed_dim // (self.num_heads * 3)
        query, key, value = query_projected.chunk(3, -1)
        query = query.view(batch_size, -1, self.num_heads, head_dim).transpose(1, 2)
        key = key.view(batch_size, -1, self.num_heads, head_dim).transpose(1, 2)
        value = value.view(batch_size, -1, self.num_heads, head_dim).transpose(1, 2)
        # the backend is chosen by the enclosing sdp_kernel context
        attn = F.scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                              is_causal=False)
        attn = attn.transpose(1, 2).reshape(batch_size, -1, self.num_heads * head_dim)
        return self.out_proj(attn), None


def build_composite_mha_from_nn_mha(pt):
    assert pt._qkv_same_embed_dim
    in_proj_weight = pt.in_proj_weight
    assert in_proj_weight is not None
    assert pt.batch_first
    return CompositeMHA(pt.num_heads, pt.in_proj_weight, pt.in_proj_bias, pt.out_proj)


def generate_rand_batch(batch_size, max_sequence_len, embed_dimension, pad_percentage=None,
                        dtype=torch.float16, device=DEVICE):
    if not pad_percentage:
        return (torch.randn(batch_size, max_sequence_len, embed_dimension, dtype=dtype, device=device),
                None)
    # Really slow, but should work
    seq_len_list = [int(max_sequence_len * (1 - random.gauss(pad_percentage, 0.01)))
                    for _ in range(batch_size)]
    # Make random ele max length
    seq_len_list[random.randint(0, batch_size - 1)] = max_sequence_len
    return (torch.nested.nested_tensor([torch.randn(seq_len, embed_dimension, dtype=dtype, device=device)
                                        for seq_len in seq_len_list]), seq_len_list)


def benchmark_torch_function_in_microseconds(f, *args, **kwargs):
    t0 = benchmark.Timer(stmt="f(*args, **kwargs)", globals={"args": args, "kwargs": kwargs, "f": f})
    return t0.blocked_autorange().mean * 1e6


def assert_close_tensors(tensor_a, tensor_b):
    # First order sanity check. Not a replacement for rigorous tests.
    if tensor_a.is_nested and tensor_b.is_nested:
        for a, b in zip(tensor_a.unbind(), tensor_b.unbind()):
            assert torch.allclose(a, b, atol=1e-2, rtol=1e-2)
    else:
        assert torch.allclose(tensor_a, tensor_b, atol=1e-3, rtol=1e-3)


def run_single_experiment(config: ExperimentConfig) -> ExperimentResults:
    with sdp_kernel(enable_math=config.enable_math, enable_flash=config.enable_flash,
                    enable_mem_efficient=config.enable_mem_efficient):
        dropout_p = 0.0
        mask = None
        nn_mha = torch.nn.MultiheadAttention(embed_dim=config.embed_dimension, num_heads=config.num_heads,
                                             batch_first=True, dropout=dropout_p)
        nn_mha = nn_mha.eval().to(DEVICE, config.dtype)
        composite_mha = build_composite_mha_from_nn_mha(nn_mha)
        qkv, lengths = generate_rand_batch(config.batch_size, config.max_sequence_len,
                                           config.embed_dimension, config.pad_percentage, config.dtype)
        nn_mha_output, _ = nn_mha(qkv, qkv, qkv, mask)
        composite_mha_output, _ = composite_mha(qkv, qkv, qkv, mask)
        # First order sanity check
        assert_close_tensors(nn_mha_output, composite_mha_output)

        nn_mha_time = benchmark_torch_function_in_microseconds(nn_mha, qkv, qkv, qkv, mask)
        composite_mha_time = benchmark_torch_function_in_microseconds(composite_mha, qkv, qkv, qkv, mask)

        # TorchDynamo will error on NestedTensors
        if config.pad_percentage is None:
            compiled_nn_mha = torch.compile(nn_mha)
            compiled_composite_mha = torch.compile(composite_mha)
            compiled_nn_mha_time = benchmark_torch_function_in_microseconds(compiled_nn_mha, qkv, qkv, qkv, mask)
            compiled_composite_mha_time = benchmark_torch_function_in_microseconds(
                compiled_composite_mha, qkv, qkv, qkv, mask)
        else:
            compiled_nn_mha_time = float("nan")
            compiled_composite_mha_time = float("nan")

        results = ExperimentResults(nn_mha_time, compiled_nn_mha_time, composite_mha_time,
                                    compiled_composite_mha_time)
        return results


def generate_experiments(batch_sizes, num_heads, max_seq_lens, embed_dims, dtypes,
                         pad_percentages) -> List[ExperimentConfig]:
    configs = []
    for bsz, n_heads, seq_len, embed_dim, dtype, padding in itertools.product(
            batch_sizes, num_heads, max_seq_lens, embed_dims, dtypes, pad_percentages):
        configs.append(ExperimentConfig(batch_size=bsz, num_heads=n_heads, max_sequence_len=seq_len,
                                        embed_dimension=embed_dim, dtype=dtype, pad_percentage=padding,
                                        enable_math=False, enable_flash=True, enable_mem_efficient=True))
    return configs


def main(save_path, dtype_names: Tuple[str, ...]) -> None:
    seed = 123
    random.seed(seed)
    torch.manual_seed(seed)
    # the flash kernel needs sm80+ for bf16
    major, _minor = torch.cuda.get_device_capability()
    dtypes = [getattr(torch, name) for name in dtype_names]
    if major < 8:
        dtypes = [d for d in dtypes if d != torch.bfloat16]

    batch_sizes = [2, 8, 32]
    max_seq_lens = [256, 1024]
    embed_dims = [512, 1024]
    num_heads = [8, 16]
    pad_percentages = [None, 0.9]

    experiment_configs = generate_experiments(batch_sizes, num_heads, max_seq_lens, embed_dims,
                                              dtypes, pad_percentages)
    table = []
    results = defaultdict(list)
    print(f"Running on {torch.cuda.get_device_name()}")
    for experiment_config in tqdm(experiment_configs):
        experiment_result = run_single_experiment(experiment_config)
        table.append(experiment_config.get_entries() + experiment_result.get_entries())
        for k, v in zip(ExperimentConfig.get_entry_names() + ExperimentResults.get_entry_names(),
                        experiment_config.get_entries() + experiment_result.get_entries()):
            results[k].append(v)

    headers = ExperimentConfig.get_entry_names() + ExperimentResults.get_entry_names()
    print(tabulate(table, headers=headers, tablefmt="github"))
    if save_path:
        with open(save_path, "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(headers)
            writer.writerows(table)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--output", type=str, default=None, help="csv file to write results to")
    parser.add_argument("--dtype", nargs="+", default=["float16", "bfloat16"])
    args = parser.parse_args()
    main(args.output, tuple(args.dtype))
