# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.
#
# This source code is licensed under the BSD 3-Clause license found in the
# LICENSE file in the root directory of this source tree.
import itertools
from typing import Optional

import fire
import pandas as pd
import torch
import torch.utils.benchmark as benchmark
from torch.profiler import ProfilerActivity, profile

# Peak numbers from the public datasheets, dense (no sparsity).
# Keys are matched against torch.cuda.get_device_name().
GPU_SPECS = {
    "NVIDIA H100 80GB HBM3": {
        "bf16_peak_tops": 989e12,
        "fp8_peak_tops": 1979e12,
        "peak_mem_bw_bytes_sec": 3.35e12,
    },
    "NVIDIA H100 PCIe": {
        "bf16_peak_tops": 756e12,
        "fp8_peak_tops": 1513e12,
        "peak_mem_bw_bytes_sec": 2.0e12,
    },
    "NVIDIA L40S": {
        "bf16_peak_tops": 362e12,
        "fp8_peak_tops": 733e12,
        "peak_mem_bw_bytes_sec": 0.864e12,
    },
    "NVIDIA B200": {
        "bf16_peak_tops": 2.25e15,
        "fp8_peak_tops": 4.5e15,
        "peak_mem_bw_bytes_sec": 8.0e12,
    },
}


def get_specs():
    device_name = torch.cuda.get_device_name(0)
    if device_name not in GPU_SPECS:
        raise AssertionError(
            f"{device_name} not found in GPU_SPECS; add its datasheet numbers first"
        )
    return GPU_SPECS[device_name]


def get_name_to_shapes_iter(shape_gen_name: str, M: Optional[int], K: Optional[int], N: Optional[int]):
    if shape_gen_name == "llama":
        assert M == K == N == None, f"M, K and N arguments not supported for shape_gen_name {shape_gen_name}"
        bsz, seq_len = 4, 4096
        M = bsz * seq_len
        # LLaMa 2 70B single-node weight shapes
        # assumes fused attn.wqkv and ffn.w13
        name_to_shapes_70b = {
            "attn.wqkv": (8192, 1280),
            "attn.w0": (1024, 8192),
            "ffn.w13": (8192, 7168),
            "ffn.w2": (3584, 8192),
        }
        return ((name, (M, K, N)) for name, (K, N) in name_to_shapes_70b.items())
    elif shape_gen_name == "square":
        name_to_shapes = {}
        min_power_of_2 = 8  # 256
        max_power_of_2 = 15  # 32,768
        for idx, power_of_2 in enumerate(range(min_power_of_2, max_power_of_2 + 1)):
            val = 2**power_of_2
            name_to_shapes[idx] = val, val, val
        return ((name, (M, K, N)) for name, (M, K, N) in name_to_shapes.items())
    elif shape_gen_name == "custom":
        assert M is not None and K is not None and N is not None, "M, K, N must be specified for custom shape_gen"
        name_to_shapes = {1: (M, K, N)}
        return ((name, (M, K, N)) for name, (M, K, N) in name_to_shapes.items())
    raise AssertionError(f"unknown shape_gen_name {shape_gen_name}")


def benchmark_fn_in_sec(f, *args, **kwargs):
    # Manual warmup
    for _ in range(4):
        f(*args, **kwargs)
    t0 = benchmark.Timer(
        stmt="f(*args, **kwargs)", globals={"args": args, "kwargs": kwargs, "f": f}
    )
    measurement = t0.blocked_autorange()
    return measurement.mean


def get_gpu_kernel_time(f, *args, **kwargs):
    # warmup
    for _ in range(4):
        f(*args, **kwargs)
    n_iter = 5
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(n_iter):
            f(*args, **kwargs)
            torch.cuda.synchronize()
    # get the gpu kernel time and aggregate it
    num_leaf_tensors = 1 + len(args) + len(kwargs)
    ref_times = []
    for e in prof.key_averages():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            ref_times.append(e.self_device_time_total)
    total = sum(ref_times) / n_iter / 1e6
    del num_leaf_tensors
    return total


def run(
    n_limit: Optional[int] = None,
    shape_gen_name: str = "llama",
    out_filename: Optional[str] = None,
    M: Optional[int] = None,
    K: Optional[int] = None,
    N: Optional[int] = None,
    use_gpu_kernel_time: bool = False,
    recipe: str = "tensorwise",
):
    device = "cuda"
    assert recipe in ("tensorwise", "rowwise"), "unsupported"

    specs = get_specs()
    bf16_peak_tops = specs["bf16_peak_tops"]
    fp8_peak_tops = specs["fp8_peak_tops"]
    print(f"gpu_name: {torch.cuda.get_device_name(0)}")
    print(f"peak tops: bf16 {bf16_peak_tops:.2e}, fp8 {fp8_peak_tops:.2e}")

    headers = (
        "fast_accum",
        "name",
        "M",
        "K",
        "N",
        "ref_time_s",
        "fp8_time_s",
        "fp8_speedup",
    )
    results = []

    name_to_shapes = get_name_to_shapes_iter(shape_gen_name, M, K, N)
    fast_accum_vals = [True, False]

    for idx, (fast_accum, (name, (M, K, N))) in enumerate(
        itertools.product(fast_accum_vals, name_to_shapes)
    ):
        if n_limit is not None and idx >= n_limit:
            break

        tops = 2 * M * N * K
        print("M, K, N:", M, K, N, f"tops: {tops:.2E}")

        # raw torch.mm
        dtype = torch.bfloat16
        A = torch.zeros(M, K, device=device, dtype=dtype)
        B = torch.zeros(K, N, device=device, dtype=dtype).t().contiguous().t()
        if use_gpu_kernel_time:
            ref_time_s = get_gpu_kernel_time(torch.mm, A, B)
        else:
            ref_time_s = benchmark_fn_in_sec(torch.mm, A, B)
        ref_tops_sec = tops / ref_time_s
        ref_pct_top_peak = ref_tops_sec / bf16_peak_tops
        print(f"bf16 time_s: {ref_time_s:.2e}, {ref_pct_top_peak:.2f} of peak")

        # raw float8 matmul (upper bound for what we can achive in eager mode)
        # TODO(future): add e5m2
        d1, d2, d3 = torch.float8_e4m3fn, torch.float8_e4m3fn, dtype
        A = torch.zeros(M, K, device=device, dtype=d1)
        B = torch.zeros(K, N, device=device, dtype=d2).t().contiguous().t()
        if recipe == "tensorwise":
            scale_a = torch.tensor([1.0], device=device)
            scale_b = torch.tensor([1.0], device=device)
        else:
            scale_a = torch.ones(M, 1, device=device)
            scale_b = torch.ones(1, N, device=device)

        def do_matmul(A, B):
            nonlocal scale_a
            nonlocal scale_b
            return torch._scaled_mm(
                A, B, scale_a, scale_b, out_dtype=d3, use_fast_accum=fast_accum
            )

        if use_gpu_kernel_time:
            fp8_time_s = get_gpu_kernel_time(do_matmul, A, B)
        else:
            fp8_time_s = benchmark_fn_in_sec(do_matmul, A, B)
        fp8_tops_sec = tops / fp8_time_s
        fp8_pct_top_peak = fp8_tops_sec / fp8_peak_tops
        print(f"fp8 time_s: {fp8_time_s:.2e}, {fp8_pct_top_peak:.2f} of peak")

        results.append(
            [
                fast_accum,
                name,
                M,
                K,
                N,
                ref_time_s,
                fp8_time_s,
                ref_time_s / fp8_time_s,
            ]
        )

    data_pd = pd.DataFrame(results, columns=headers)
    data_pd["shape"] = (
        "("
        + data_pd["M"].astype(str)
        + ", "
        + data_pd["K"].astype(str)
        + ", "
        + data_pd["N"].astype(str)
        + ")"
    )
    data_pd = data_pd[
        ["fast_accum", "name", "shape", "ref_time_s", "fp8_time_s", "fp8_speedup"]
    ]
    print(data_pd)
    if out_filename is not None:
        data_pd.to_csv(out_filename)


def main() -> None:
    fire.Fire(run)


if __name__ == "__main__":
    main()  # pragma: no cover
