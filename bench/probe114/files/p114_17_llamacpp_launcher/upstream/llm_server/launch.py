"""Start an OpenAI-compatible llama.cpp server sized to the GPUs in this box.

Reads GGUF metadata to learn the layer count and per-layer size, queries free VRAM on every
visible GPU and picks ``n_gpu_layers`` / ``tensor_split`` so that the model plus KV cache fits.

    python -m llm_server.launch --model models/llama-3-8b-instruct.Q5_K_M.gguf --ctx 8192
"""
from __future__ import annotations

import argparse
import logging
import os
import struct
import subprocess
import sys
from dataclasses import dataclass
from typing import List, Optional

# Only use the first GPU unless told otherwise -- the second card in most of our boxes
# drives the displays.
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")

try:
    import pynvml

    pynvml.nvmlInit()
    HAVE_NVML = True
except Exception:  # pragma: no cover - no driver / no GPU
    HAVE_NVML = False

import llama_cpp

log = logging.getLogger("llm_server.launch")

GGUF_MAGIC = 0x46554747  # "GGUF"
MiB = 1024 * 1024
RESERVED_MIB = 600  # CUDA context + cuBLAS workspace + scratch


@dataclass
class GpuInfo:
    index: int
    name: str
    free_mib: int
    total_mib: int


def visible_gpus() -> List[GpuInfo]:
    """Free/total memory per visible GPU via NVML (respects CUDA_VISIBLE_DEVICES)."""
    if not HAVE_NVML:
        return []
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    count = pynvml.nvmlDeviceGetCount()
    indices = [int(x) for x in visible.split(",") if x.strip()] if visible else list(range(count))
    gpus = []
    for logical, physical in enumerate(indices):
        h = pynvml.nvmlDeviceGetHandleByIndex(physical)
        mem = pynvml.nvmlDeviceGetMemoryInfo(h)
        name = pynvml.nvmlDeviceGetName(h)
        if isinstance(name, bytes):
            name = name.decode()
        gpus.append(GpuInfo(logical, name, mem.free // MiB, mem.total // MiB))
    return gpus


def read_gguf_layer_count(path: str) -> Optional[int]:
    """Very small GGUF header reader: returns <arch>.block_count if present."""
    with open(path, "rb") as f:
        magic, version = struct.unpack("<II", f.read(8))
        if magic != GGUF_MAGIC:
            return None
        n_tensors, n_kv = struct.unpack("<QQ", f.read(16))
        for _ in range(n_kv):
            (klen,) = struct.unpack("<Q", f.read(8))
            key = f.read(klen).decode("utf-8", "replace")
            (vtype,) = struct.unpack("<I", f.read(4))
            if vtype == 8:  # string
                (slen,) = struct.unpack("<Q", f.read(8))
                f.read(slen)
                continue
            if vtype in (4, 5):  # uint32 / int32
                (val,) = struct.unpack("<I", f.read(4))
                if key.endswith(".block_count"):
                    return val
                continue
            if vtype in (10, 11):  # uint64 / int64
                f.read(8)
                continue
            if vtype in (0, 1, 7):  # u8 / i8 / bool
                f.read(1)
                continue
            if vtype in (2, 3):
                f.read(2)
                continue
            if vtype == 6:  # float32
                f.read(4)
                continue
            if vtype == 12:
                f.read(8)
                continue
            # arrays and anything else: give up, caller falls back to "all layers"
            return None
    return None


def plan_offload(model_path: str, n_ctx: int, gpus: List[GpuInfo]):
    """Return (n_gpu_layers, tensor_split) for the given GPUs."""
    if not gpus:
        log.warning("no NVIDIA GPU visible -- running on CPU")
        return 0, None
    n_layers = read_gguf_layer_count(model_path) or 80
    model_mib = os.path.getsize(model_path) // MiB
    per_layer = model_mib / n_layers
    kv_mib = n_ctx * n_layers * 2 * 4096 * 2 // MiB // 8  # rough: fp16 K+V, GQA 8
    budget = sum(max(g.free_mib - RESERVED_MIB, 0) for g in gpus) - kv_mib
    n_gpu_layers = int(max(0, min(n_layers, budget // max(per_layer, 1))))
    if n_gpu_layers >= n_layers:
        n_gpu_layers = -1  # everything, including the output layer
    split = None
    if len(gpus) > 1:
        total_free = sum(g.free_mib for g in gpus)
        split = [round(g.free_mib / total_free, 3) for g in gpus]
    log.info(
        "model %d MiB, %d layers, kv ~%d MiB, free %s -> n_gpu_layers=%d split=%s",
        model_mib, n_layers, kv_mib, [g.free_mib for g in gpus], n_gpu_layers, split,
    )
    return n_gpu_layers, split


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--alias", default=None)
    ap.add_argument("--ctx", type=int, default=4096)
    ap.add_argument("--n-batch", type=int, default=512)
    ap.add_argument("--host", default="0.0.0.0")
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--n-gpu-layers", type=int, default=None, help="override the automatic choice")
    ap.add_argument("--flash-attn", action="store_true", help="use the CUDA flash-attention kernels")
    ap.add_argument("--chat-format", default=None)
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    if not llama_cpp.llama_supports_gpu_offload():
        log.warning("llama-cpp-python was built without GPU support; run scripts/install_llama_cpp.sh")

    gpus = visible_gpus()
    for g in gpus:
        log.info("GPU %d: %s, %d/%d MiB free", g.index, g.name, g.free_mib, g.total_mib)
    n_gpu_layers, split = plan_offload(args.model, args.ctx, gpus)
    if args.n_gpu_layers is not None:
        n_gpu_layers = args.n_gpu_layers

    cmd = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", args.model,
        "--host", args.host,
        "--port", str(args.port),
        "--n_ctx", str(args.ctx),
        "--n_batch", str(args.n_batch),
        "--n_gpu_layers", str(n_gpu_layers),
        "--offload_kqv", "true",
    ]
    if split:
        cmd += ["--tensor_split", *map(str, split)]
    if args.flash_attn:
        cmd += ["--flash_attn", "true"]
    if args.alias:
        cmd += ["--model_alias", args.alias]
    if args.chat_format:
        cmd += ["--chat_format", args.chat_format]
    log.info("exec: %s", " ".join(cmd))
    os.execv(sys.executable, cmd)


if __name__ == "__main__":
    main()
