"""Process-wide runtime setup for training neural operators / PINNs.

One place for: device selection, seeding and determinism, TF32 and matmul precision, the CUDA
caching-allocator configuration, torch.compile / inductor knobs and an optional profiler.
Everything here is driven by the `runtime:` section of the Hydra config.
"""
import contextlib
import logging
import os
import random
from dataclasses import dataclass, field
from typing import Iterator, Optional

import numpy as np
import torch
import torch._dynamo
import torch._inductor.config as inductor_config
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

log = logging.getLogger(__name__)


@dataclass
class RuntimeConfig:
    seed: int = 0
    deterministic: bool = False
    allow_tf32: bool = True
    matmul_precision: str = "high"
    expandable_segments: bool = True
    compile: bool = False
    compile_mode: str = "max-autotune"
    cudagraphs: bool = True
    profile: bool = False
    profile_dir: str = "profiles"
    linalg_backend: str = "cusolver"
    extra: dict = field(default_factory=dict)


def configure_allocator(cfg: RuntimeConfig):
    """Must run before the first CUDA allocation."""
    if cfg.expandable_segments and "PYTORCH_CUDA_ALLOC_CONF" not in os.environ:
        os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"


def device_from_env() -> torch.device:
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    if torch.cuda.is_available():
        torch.cuda.set_device(local_rank)
        return torch.device("cuda", local_rank)
    log.warning("CUDA not available, running on CPU")
    return torch.device("cpu")


def seed_everything(seed: int, rank: int = 0):
    seed = seed + rank
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)


def set_determinism(enabled: bool):
    if enabled:
        # cuBLAS needs a fixed workspace for deterministic GEMMs
        os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
        torch.use_deterministic_algorithms(True, warn_only=False)
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
    else:
        torch.use_deterministic_algorithms(False)
        torch.backends.cudnn.deterministic = False
        torch.backends.cudnn.benchmark = True


def set_precision(cfg: RuntimeConfig):
    torch.backends.cuda.matmul.allow_tf32 = cfg.allow_tf32
    torch.backends.cudnn.allow_tf32 = cfg.allow_tf32
    torch.set_float32_matmul_precision(cfg.matmul_precision)
    # eigh / svd / lstsq for the spectral and POD layers
    torch.backends.cuda.preferred_linalg_library(cfg.linalg_backend)


def supports_bf16() -> bool:
    return torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8


def autocast_dtype() -> torch.dtype:
    return torch.bfloat16 if supports_bf16() else torch.float16


def configure_inductor(cfg: RuntimeConfig):
    inductor_config.coordinate_descent_tuning = True
    inductor_config.triton.unique_kernel_names = True
    inductor_config.triton.cudagraphs = cfg.cudagraphs
    inductor_config.fx_graph_cache = True
    torch._dynamo.config.cache_size_limit = 64


def maybe_compile(model: torch.nn.Module, cfg: RuntimeConfig) -> torch.nn.Module:
    if not cfg.compile:
        return model
    if not torch.cuda.is_available():
        log.info("torch.compile disabled: no CUDA device")
        return model
    configure_inductor(cfg)
    return torch.compile(model, mode=cfg.compile_mode, fullgraph=False, dynamic=False)


@contextlib.contextmanager
def maybe_profile(cfg: RuntimeConfig, rank: int = 0) -> Iterator[Optional[profile]]:
    if not cfg.profile or rank != 0:
        yield None
        return
    os.makedirs(cfg.profile_dir, exist_ok=True)
    with profile(
        activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
        schedule=schedule(wait=2, warmup=2, active=6, repeat=1),
        on_trace_ready=tensorboard_trace_handler(cfg.profile_dir),
        record_shapes=True,
        profile_memory=True,
        with_stack=False,
    ) as prof:
        yield prof


def log_environment() -> dict:
    """Versions that end up in every run's metadata file."""
    import platform

    info = {
        "python": platform.python_version(),
        "host": platform.node(),
        "torch": torch.__version__,
        "cuda_build": torch.version.cuda,
        "numpy": np.__version__,
        "num_threads": torch.get_num_threads(),
    }
    for k, v in info.items():
        log.info(f"env {k}: {v}")
    return info


class StepTimer:
    """Wall-clock step timer with an exponential moving average (host-side only)."""

    def __init__(self, alpha: float = 0.1):
        self.alpha = alpha
        self.avg: Optional[float] = None
        self._t0: Optional[float] = None

    def start(self):
        import time

        self._t0 = time.perf_counter()

    def stop(self) -> float:
        import time

        dt = time.perf_counter() - self._t0
        self.avg = dt if self.avg is None else (1 - self.alpha) * self.avg + self.alpha * dt
        return dt


def setup_runtime(cfg: RuntimeConfig, rank: int = 0) -> torch.device:
    configure_allocator(cfg)
    device = device_from_env()
    seed_everything(cfg.seed, rank)
    set_determinism(cfg.deterministic)
    set_precision(cfg)
    log.info(f"runtime: device={device} deterministic={cfg.deterministic} tf32={cfg.allow_tf32} "
             f"amp_dtype={autocast_dtype()} compile={cfg.compile}")
    return device
