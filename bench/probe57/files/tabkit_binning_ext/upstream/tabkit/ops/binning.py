"""Quantile binning and gradient histograms backed by the tabkit._C extension.

Used by the GPU gradient-boosting head (tabkit.boost) and by the binned numerical embeddings:
  * QuantileBinner   - learns per-feature edges on the host, maps values to uint8 bin ids on device
  * build_histogram  - per-(node, feature, bin) sums of gradients / hessians for the split search
"""
from typing import Optional, Tuple

import torch

from tabkit import _C


def quantile_bin(x: torch.Tensor, edges: torch.Tensor) -> torch.Tensor:
    """x: [N, F] float, edges: [F, B-1] sorted -> [N, F] uint8 bin ids (NaN -> bin 0)."""
    assert x.dim() == 2 and edges.dim() == 2 and x.shape[1] == edges.shape[0]
    if x.is_cuda:
        return _C.quantile_bin_cuda(x.contiguous(), edges.contiguous())
    return _C.quantile_bin_cpu(x.contiguous(), edges.contiguous())


def build_histogram(grad: torch.Tensor, hess: torch.Tensor, bins: torch.Tensor, node_ids: torch.Tensor,
                    n_nodes: int, n_bins: int) -> Tuple[torch.Tensor, torch.Tensor]:
    """Returns (G, H) of shape [n_nodes, F, n_bins]."""
    if grad.is_cuda:
        return _C.build_histogram_cuda(grad, hess, bins, node_ids, n_nodes, n_bins)
    return _C.build_histogram_cpu(grad, hess, bins, node_ids, n_nodes, n_bins)


def histogram_reference(grad, hess, bins, node_ids, n_nodes, n_bins):
    """Pure torch version (tests and debugging): scatter-add over a flattened (node, feature, bin) index."""
    n, f = bins.shape
    feat = torch.arange(f, device=bins.device).unsqueeze(0).expand(n, f)
    flat = (node_ids.unsqueeze(1) * f + feat) * n_bins + bins.long()
    G = torch.zeros(n_nodes * f * n_bins, device=grad.device, dtype=grad.dtype)
    H = torch.zeros_like(G)
    G.index_add_(0, flat.reshape(-1), grad.unsqueeze(1).expand(n, f).reshape(-1))
    H.index_add_(0, flat.reshape(-1), hess.unsqueeze(1).expand(n, f).reshape(-1))
    return G.view(n_nodes, f, n_bins), H.view(n_nodes, f, n_bins)


class QuantileBinner:
    def __init__(self, max_bins: int = 256, subsample: int = 200_000, seed: int = 0):
        assert 2 <= max_bins <= 256, "bin ids are stored as uint8"
        self.max_bins = max_bins
        self.subsample = subsample
        self.seed = seed
        self.edges: Optional[torch.Tensor] = None

    def fit(self, x: torch.Tensor) -> "QuantileBinner":
        g = torch.Generator().manual_seed(self.seed)
        x_host = x.detach().float().cpu()
        if len(x_host) > self.subsample:
            x_host = x_host[torch.randperm(len(x_host), generator=g)[: self.subsample]]
        qs = torch.linspace(0, 1, self.max_bins + 1)[1:-1]
        edges = []
        for j in range(x_host.shape[1]):
            col = x_host[:, j]
            col = col[~torch.isnan(col)]
            e = torch.quantile(col, qs) if len(col) else torch.zeros(len(qs))
            edges.append(torch.cummax(e, 0).values)
        self.edges = torch.stack(edges)
        return self

    def transform(self, x: torch.Tensor) -> torch.Tensor:
        assert self.edges is not None, "call fit() first"
        edges = self.edges.to(x.device, non_blocking=True)
        return quantile_bin(x.float(), edges)

    def fit_transform(self, x: torch.Tensor) -> torch.Tensor:
        return self.fit(x).transform(x)


class HistogramBuilder:
    """Builds the histograms of the next tree level on a side stream while the caller evaluates
    the splits of the current level (the two only meet at `collect`)."""

    def __init__(self, n_bins: int, device: torch.device):
        self.n_bins = n_bins
        self.device = device
        self._side_stream = torch.cuda.Stream(device=device)
        self._pending = None

    def submit(self, grad, hess, bins, node_ids, n_nodes):
        self._side_stream.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(self._side_stream):
            self._pending = build_histogram(grad, hess, bins, node_ids, n_nodes, self.n_bins)
            for t in (grad, hess, bins, node_ids):
                t.record_stream(self._side_stream)

    def collect(self):
        torch.cuda.current_stream(self.device).wait_stream(self._side_stream)
        out, self._pending = self._pending, None
        return out


def best_splits(G: torch.Tensor, H: torch.Tensor, reg_lambda: float = 1.0, min_hess: float = 1e-3):
    """Exhaustive split search over the histogram bins (left = bins <= b)."""
    GL = G.cumsum(-1)
    HL = H.cumsum(-1)
    Gt = GL[..., -1:]
    Ht = HL[..., -1:]
    GR = Gt - GL
    HR = Ht - HL
    gain = GL ** 2 / (HL + reg_lambda) + GR ** 2 / (HR + reg_lambda) - Gt ** 2 / (Ht + reg_lambda)
    gain = torch.where((HL < min_hess) | (HR < min_hess), torch.full_like(gain, -float("inf")), gain)
    flat = gain.flatten(1)
    best, idx = flat.max(dim=1)
    feature = idx // G.shape[-1]
    threshold = idx % G.shape[-1]
    return best, feature, threshold
