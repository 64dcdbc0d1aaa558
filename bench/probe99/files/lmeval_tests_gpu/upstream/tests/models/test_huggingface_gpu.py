"""GPU smoke tests for the HF backend.

These are skipped on CPU-only CI runners; the nightly job runs them on a single
A10G runner (see .github/workflows/nightly_gpu.yml).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import lm_eval.tasks as tasks
from lm_eval.api.instance import Instance
from lm_eval.models.huggingface import HFLM


os.environ["TOKENIZERS_PARALLELISM"] = "false"
task_manager = tasks.TaskManager()

requires_gpu = pytest.mark.skipif(
    not torch.cuda.is_available(), reason="requires a CUDA device"
)
requires_multi_gpu = pytest.mark.skipif(
    torch.cuda.device_count() < 2, reason="requires at least 2 GPUs"
)

TEST_MODEL = "EleutherAI/pythia-70m"


def _loglikelihood_requests(task_name: str, limit: int = 10):
    task_dict = tasks.get_task_dict([task_name], task_manager)
    task = task_dict[task_name]
    task.build_all_requests(limit=limit, rank=0, world_size=1)
    return [req for req in task.instances if req.request_type == "loglikelihood"]


@pytest.fixture(scope="module")
def gpu_lm():
    return HFLM(pretrained=TEST_MODEL, device="cuda", dtype="float16", batch_size=8)


@pytest.fixture(scope="module")
def cpu_lm():
    return HFLM(pretrained=TEST_MODEL, device="cpu", dtype="float32", batch_size=8)


@requires_gpu
def test_model_is_on_gpu(gpu_lm):
    param = next(gpu_lm.model.parameters())
    assert param.is_cuda
    assert str(gpu_lm.device).startswith("cuda")


@requires_gpu
def test_loglikelihood_matches_cpu(gpu_lm, cpu_lm):
    reqs = _loglikelihood_requests("arc_easy")
    gpu_res = np.array([ll for ll, _ in gpu_lm.loglikelihood(reqs)])
    cpu_res = np.array([ll for ll, _ in cpu_lm.loglikelihood(reqs)])
    # fp16 on GPU vs fp32 on CPU: loose tolerance
    np.testing.assert_allclose(gpu_res, cpu_res, rtol=5e-2, atol=5e-2)


@requires_gpu
def test_auto_batch_size_detection():
    lm = HFLM(pretrained=TEST_MODEL, device="cuda:0", dtype="float16", batch_size="auto", max_batch_size=32)
    reqs = _loglikelihood_requests("arc_easy", limit=4)
    lm.loglikelihood(reqs)
    assert lm.batch_sizes == {} or max(lm.batch_sizes.values()) <= 32
    torch.cuda.empty_cache()


@requires_gpu
def test_generate_until_greedy(gpu_lm):
    req = Instance(
        request_type="generate_until",
        doc={},
        arguments=("The capital of France is", {"until": ["\n"], "max_gen_toks": 8, "do_sample": False}),
        idx=0,
    )
    out = gpu_lm.generate_until([req])
    assert isinstance(out[0], str)


@requires_gpu
def test_peak_memory_is_reasonable(gpu_lm):
    torch.cuda.reset_peak_memory_stats()
    reqs = _loglikelihood_requests("arc_easy", limit=8)
    gpu_lm.loglikelihood(reqs)
    peak_mb = torch.cuda.max_memory_allocated() / 2**20
    # pythia-70m in fp16 should comfortably fit in < 2 GiB including activations
    assert peak_mb < 2048, f"unexpected peak memory {peak_mb:.0f} MiB"


@requires_multi_gpu
def test_parallelize_spreads_layers():
    lm = HFLM(pretrained=TEST_MODEL, parallelize=True, dtype="float16", max_memory_per_gpu="200MB")
    devices = {str(p.device) for p in lm.model.parameters()}
    assert len(devices) >= 2, devices


def test_cpu_fallback_runs(cpu_lm):
    # always runs, even on CPU-only CI
    reqs = _loglikelihood_requests("arc_easy", limit=2)
    res = cpu_lm.loglikelihood(reqs)
    assert len(res) == len(reqs)


def test_results_dir_is_writable(tmp_path: Path):
    # sanity check used by the nightly job before launching the GPU suite
    out = tmp_path / "results.json"
    out.write_text("{}")
    assert out.exists()
    assert sys.version_info >= (3, 8)
