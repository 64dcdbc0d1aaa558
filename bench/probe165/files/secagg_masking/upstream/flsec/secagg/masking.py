"""Pairwise-mask secure aggregation (Bonawitz et al., CCS'17), PyTorch edition.

Every client ``u`` shares a seed ``s_uv`` with every other client ``v`` (derived
with X25519 + HKDF, see ``keys.py``). Before upload the client adds

    y_u = x_u + PRG(b_u) + sum_{v > u} PRG(s_uv) - sum_{v < u} PRG(s_uv)   (mod 2^k)

to its quantised update ``x_u``. The pairwise masks cancel in the sum, the
self-mask ``b_u`` is removed by the server after unmasking. Updates are
quantised to fixed point so that the arithmetic is exact modulo 2^k.

All clients **must** expand a seed into exactly the same mask. Masks are
therefore generated with torch's Philox generator on the GPU when every party
has one (much faster for 100M+ parameter models) and on the CPU otherwise.
"""
import hashlib
import logging
import time
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional

import numpy as np
import torch

logger = logging.getLogger(__name__)

# fixed-point and ring parameters
DEFAULT_BITS = 32
DEFAULT_SCALE = 2 ** 16
MOD_BITS = 62  # int64 arithmetic without overflow for up to 2^(63-62) parties summing


@dataclass
class SecAggConfig:
    num_bits: int = DEFAULT_BITS
    scale: int = DEFAULT_SCALE
    clip: float = 8.0
    use_cuda: bool = True
    mask_chunk: int = 1 << 24
    dropout_tolerance: float = 0.3
    extra: Dict[str, str] = field(default_factory=dict)

    @property
    def modulus(self) -> int:
        return 1 << self.num_bits


def _mask_device(cfg: SecAggConfig) -> torch.device:
    if cfg.use_cuda and torch.cuda.is_available():
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def seed_to_int(seed: bytes) -> int:
    """Torch generators take a 64-bit seed; hash the 32-byte shared secret down."""
    return int.from_bytes(hashlib.sha256(seed).digest()[:8], "little") & ((1 << 63) - 1)


def expand_seed(seed: bytes, numel: int, cfg: SecAggConfig, device: Optional[torch.device] = None) -> torch.Tensor:
    """PRG(seed) -> int64 tensor of ``numel`` values uniform in [0, 2^num_bits)."""
    device = device or _mask_device(cfg)
    gen = torch.Generator(device="cuda" if device.type == "cuda" else "cpu")
    gen.manual_seed(seed_to_int(seed))
    out = torch.empty(numel, dtype=torch.int64, device=device)
    for start in range(0, numel, cfg.mask_chunk):
        stop = min(start + cfg.mask_chunk, numel)
        out[start:stop] = torch.randint(
            0, cfg.modulus, (stop - start,), generator=gen, dtype=torch.int64, device=device
        )
    return out


def quantize(update: torch.Tensor, cfg: SecAggConfig) -> torch.Tensor:
    """float -> fixed point in Z_{2^k} (two's complement style wrap-around)."""
    clipped = update.float().clamp(-cfg.clip, cfg.clip)
    q = torch.round(clipped * cfg.scale).to(torch.int64)
    return torch.remainder(q, cfg.modulus)


def dequantize(q: torch.Tensor, num_clients: int, cfg: SecAggConfig) -> torch.Tensor:
    half = cfg.modulus // 2
    signed = torch.where(q >= half, q - cfg.modulus, q)
    return signed.double().div(cfg.scale).float()


def flatten_update(state: Dict[str, torch.Tensor]) -> torch.Tensor:
    return torch.cat([v.detach().reshape(-1).float() for v in state.values()])


def unflatten_update(flat: torch.Tensor, like: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
    out, offset = {}, 0
    for k, v in like.items():
        n = v.numel()
        out[k] = flat[offset:offset + n].view_as(v).to(v.dtype)
        offset += n
    return out


class SecAggClient:
    def __init__(self, client_id: int, peers: Iterable[int], cfg: SecAggConfig):
        self.client_id = client_id
        self.peers = sorted(p for p in peers if p != client_id)
        self.cfg = cfg
        self.device = _mask_device(cfg)
        self.pair_seeds: Dict[int, bytes] = {}
        self.self_seed: Optional[bytes] = None

    def set_seeds(self, pair_seeds: Dict[int, bytes], self_seed: bytes) -> None:
        self.pair_seeds = dict(pair_seeds)
        self.self_seed = self_seed

    def mask(self, state: Dict[str, torch.Tensor]) -> torch.Tensor:
        t0 = time.time()
        flat = flatten_update(state).to(self.device, non_blocking=True)
        y = quantize(flat, self.cfg)
        n = y.numel()
        y = torch.remainder(y + expand_seed(self.self_seed, n, self.cfg, self.device), self.cfg.modulus)
        for v in self.peers:
            m = expand_seed(self.pair_seeds[v], n, self.cfg, self.device)
            if self.client_id < v:
                y = torch.remainder(y + m, self.cfg.modulus)
            else:
                y = torch.remainder(y - m, self.cfg.modulus)
        if self.device.type == "cuda":
            torch.cuda.synchronize()
        logger.info("client %d masked %d values in %.2fs on %s", self.client_id, n, time.time() - t0, self.device)
        # uploads always go through the host
        return y.cpu()


class SecAggServer:
    def __init__(self, cfg: SecAggConfig):
        self.cfg = cfg
        self.device = _mask_device(cfg)
        # torch.cuda kernels for int64 remainder are exact; make sure TF32 never touches the
        # float dequantisation either
        torch.backends.cuda.matmul.allow_tf32 = False

    def aggregate(self, masked: Dict[int, torch.Tensor], survivors: List[int],
                  self_seeds: Dict[int, bytes], dropped_pair_seeds: Dict[int, Dict[int, bytes]]) -> torch.Tensor:
        if len(survivors) < (1 - self.cfg.dropout_tolerance) * (len(survivors) + len(dropped_pair_seeds)):
            raise RuntimeError("too many clients dropped, aborting round")
        total = None
        for u in survivors:
            y = masked[u].to(self.device)
            total = y if total is None else torch.remainder(total + y, self.cfg.modulus)
        n = total.numel()
        # remove self masks of survivors
        for u in survivors:
            total = torch.remainder(total - expand_seed(self_seeds[u], n, self.cfg, self.device), self.cfg.modulus)
        # cancel the pairwise masks that dropped clients would have removed
        for d, seeds in dropped_pair_seeds.items():
            for u, s in seeds.items():
                m = expand_seed(s, n, self.cfg, self.device)
                if u < d:
                    total = torch.remainder(total - m, self.cfg.modulus)
                else:
                    total = torch.remainder(total + m, self.cfg.modulus)
        return dequantize(total, len(survivors), self.cfg).div(len(survivors)).cpu()


def self_test(num_clients: int = 4, numel: int = 1000, use_cuda: bool = True) -> float:
    """Masks must cancel: returns max abs error of the unmasked mean (should be ~1/scale)."""
    cfg = SecAggConfig(use_cuda=use_cuda)
    rng = np.random.default_rng(0)
    updates = {i: {"w": torch.from_numpy(rng.normal(size=numel).astype(np.float32))} for i in range(num_clients)}
    seeds = {(i, j): hashlib.sha256(f"{min(i, j)}-{max(i, j)}".encode()).digest()
             for i in range(num_clients) for j in range(num_clients) if i != j}
    clients = []
    for i in range(num_clients):
        c = SecAggClient(i, range(num_clients), cfg)
        c.set_seeds({j: seeds[(i, j)] for j in range(num_clients) if j != i}, hashlib.sha256(b"self%d" % i).digest())
        clients.append(c)
    masked = {c.client_id: c.mask(updates[c.client_id]) for c in clients}
    server = SecAggServer(cfg)
    mean = server.aggregate(masked, list(range(num_clients)),
                            {c.client_id: c.self_seed for c in clients}, {})
    expected = torch.stack([u["w"] for u in updates.values()]).mean(0)
    err = (mean - expected).abs().max().item()
    logger.info("secagg self test: max err %.2e", err)
    return err
