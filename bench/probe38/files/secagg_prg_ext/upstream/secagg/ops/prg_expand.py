"""
Pairwise-mask expansion for secure aggregation (Bonawitz et al. style).

Every pair of clients (u, v) agrees on a seed s_uv; client u adds PRG(s_uv) to its
quantised update if u < v and subtracts it otherwise, so the masks cancel in the
server's sum. With thousands of peers and multi-million-parameter models the PRG
dominates client time, hence a ChaCha20 CUDA kernel (csrc/prg_chacha20_kernel.cu)
compiled on first use. A NumPy Philox fallback keeps CPU-only clients working;
both produce identical streams for the same (seed, counter).
"""

import os
import threading
from typing import Dict, List, Optional

import numpy as np
import torch
from torch.utils.cpp_extension import load

_SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "csrc")
_ext = None
_ext_lock = threading.Lock()

MODULUS_BITS = 32
MODULUS = 1 << MODULUS_BITS


def _load_ext():
    """JIT-compile the ChaCha20 mask kernel (cached under TORCH_EXTENSIONS_DIR)."""
    global _ext
    with _ext_lock:
        if _ext is None:
            _ext = load(
                name="secagg_prg",
                sources=[os.path.join(_SRC, "prg.cpp"), os.path.join(_SRC, "prg_chacha20_kernel.cu")],
                extra_cflags=["-O3"],
                extra_cuda_cflags=["-O3", "--use_fast_math", "-lineinfo", "-gencode=arch=compute_80,code=sm_80"],
                verbose=bool(int(os.environ.get("SECAGG_VERBOSE_BUILD", "0"))),
            )
    return _ext


def _seed_words(seed: int) -> np.ndarray:
    return np.array([(seed >> (32 * i)) & 0xFFFFFFFF for i in range(8)], dtype=np.uint32)


def _expand_cpu(seed: int, numel: int) -> torch.Tensor:
    bitgen = np.random.Philox(key=_seed_words(seed)[:2].view(np.uint64))
    words = np.random.Generator(bitgen).integers(0, MODULUS, size=numel, dtype=np.uint64)
    return torch.from_numpy(words.astype(np.int64))


def expand_mask(seed: int, numel: int, device: torch.device) -> torch.Tensor:
    """Uniform mask in [0, 2^32) with ``numel`` entries, as int64 on ``device``."""
    if device.type == "cuda":
        key = torch.from_numpy(_seed_words(seed).astype(np.int64)).to(device)
        return _load_ext().chacha20_expand(key, numel, MODULUS_BITS)
    return _expand_cpu(seed, numel)


def expand_masks_for_peers(my_id: int, peer_seeds: Dict[int, int], numel: int, device: torch.device) -> torch.Tensor:
    """Sum of +/- pairwise masks for all peers, reduced mod 2^32."""
    if len(peer_seeds) > 1024 and not torch.cuda.is_available():
        raise RuntimeError("mask expansion for more than 1024 peers requires the CUDA PRG kernel")
    total = torch.zeros(numel, dtype=torch.int64, device=device)
    for peer_id, seed in peer_seeds.items():
        m = expand_mask(seed, numel, device)
        if my_id < peer_id:
            total.add_(m)
        else:
            total.sub_(m)
    return torch.remainder(total, MODULUS)


class MaskPrecomputer:
    """Expands next round's masks on a side stream while the current round trains."""

    def __init__(self, my_id: int, device: torch.device):
        self.my_id = my_id
        self.device = device
        self.stream: Optional[torch.cuda.Stream] = torch.cuda.Stream(device=device) if device.type == "cuda" else None
        self._pending: Optional[torch.Tensor] = None
        self._event = None

    def launch(self, peer_seeds: Dict[int, int], numel: int) -> None:
        if self.stream is None:
            self._pending = expand_masks_for_peers(self.my_id, peer_seeds, numel, self.device)
            return
        with torch.cuda.stream(self.stream):
            self._pending = expand_masks_for_peers(self.my_id, peer_seeds, numel, self.device)
            self._event = torch.cuda.Event()
            self._event.record(self.stream)

    def result(self) -> torch.Tensor:
        if self._event is not None:
            torch.cuda.current_stream(self.device).wait_event(self._event)
            self._pending.record_stream(torch.cuda.current_stream(self.device))
        out, self._pending, self._event = self._pending, None, None
        return out


def quantize(update: torch.Tensor, clip: float, bits: int = MODULUS_BITS - 8) -> torch.Tensor:
    """Stochastic fixed-point quantisation of a clipped float update into Z_{2^32}."""
    scale = (1 << bits) / (2 * clip)
    x = (update.clamp(-clip, clip) + clip) * scale
    floor = torch.floor(x)
    x = floor + (torch.rand_like(x) < (x - floor)).to(x.dtype)
    return x.to(torch.int64)


def mask_update(update: torch.Tensor, clip: float, my_id: int, peer_seeds: Dict[int, int],
                precomputed: Optional[torch.Tensor] = None) -> torch.Tensor:
    q = quantize(update.flatten(), clip)
    mask = precomputed if precomputed is not None else expand_masks_for_peers(my_id, peer_seeds, q.numel(), q.device)
    return torch.remainder(q + mask, MODULUS)


def unmask_sum(masked_sum: torch.Tensor, n_clients: int, clip: float, bits: int = MODULUS_BITS - 8) -> torch.Tensor:
    """Server side: masks already cancelled; undo the fixed-point offset and scale."""
    scale = (1 << bits) / (2 * clip)
    centred = torch.remainder(masked_sum, MODULUS).to(torch.float64) / scale - n_clients * clip
    return centred.to(torch.float32)
