import os.path as osp
import logging
from typing import Optional, Tuple

import torch

logger = logging.getLogger('torch_cmspepr')

THISDIR = osp.dirname(osp.abspath(__file__))


def load_ops(so_file):
    if not osp.isfile(so_file):
        logger.error(f'Could not load op: No file {so_file}')
    else:
        torch.ops.load_library(so_file)


load_ops(osp.join(THISDIR, '../select_knn_cpu.so'))
load_ops(osp.join(THISDIR, '../select_knn_cuda.so'))
load_ops(osp.join(THISDIR, '../oc_cpu.so'))
load_ops(osp.join(THISDIR, '../oc_cuda.so'))


def _row_splits_from_batch(batch_x: torch.Tensor) -> torch.Tensor:
    """
    Converts a PyG-style batch vector [0,0,0,1,1,2,...] to row splits [0,3,5,...].
    The batch vector is assumed to be sorted.
    """
    counts = torch.bincount(batch_x)
    row_splits = torch.zeros(counts.size(0) + 1, dtype=torch.int32, device=batch_x.device)
    row_splits[1:] = torch.cumsum(counts, dim=0)
    return row_splits


def select_knn(
    x: torch.Tensor,
    k: int,
    batch_x: Optional[torch.Tensor] = None,
    inner_product: bool = False,
    max_radius: float = 1e9,
    mask_mode: int = 1,
) -> Tuple[torch.Tensor, torch.Tensor]:
    """
    Finds for each row of `x` the `k` nearest rows (squared euclidean distance) within the same event.

    Args:
        x (Tensor): (N, F) coordinates in the clustering space
        k (int): number of neighbours, including the point itself
        batch_x (Tensor, optional): (N,) sorted event index of every row
        max_radius (float): neighbours further away than this are set to -1

    Returns:
        neighbours (N, k) int64, distances (N, k) float32; missing neighbours are -1 / 0.
    """
    if inner_product:
        raise NotImplementedError('inner_product is not implemented for select_knn')

    if batch_x is None:
        batch_x = torch.zeros(x.size(0), dtype=torch.long, device=x.device)

    x = x.view(-1, 1) if x.dim() == 1 else x
    x, batch_x = x.contiguous(), batch_x.contiguous()
    row_splits = _row_splits_from_batch(batch_x)
    mask = torch.ones(x.size(0), dtype=torch.int32, device=x.device)

    if x.device == torch.device('cpu'):
        neighbours, distances = torch.ops.select_knn_cpu.select_knn_cpu(
            x, row_splits, mask, k, max_radius, mask_mode
        )
    else:
        # the CUDA kernel launches one thread per vertex and scans its event
        neighbours, distances = torch.ops.select_knn_cuda.select_knn_cuda(x, row_splits, mask, k, max_radius, mask_mode)
    return neighbours, distances


def knn_graph(
    x: torch.Tensor,
    k: int,
    batch: Optional[torch.Tensor] = None,
    loop: bool = False,
    flow: str = 'source_to_target',
    max_radius: float = 1e9,
) -> torch.Tensor:
    """
    Drop-in replacement of torch_cluster.knn_graph built on select_knn (much faster on GPU
    for the large HGCAL events).
    """
    assert flow in ['source_to_target', 'target_to_source']
    neighbours, _ = select_knn(x, k + (0 if loop else 1), batch, max_radius=max_radius)

    if not loop:
        # drop the first column (the point itself)
        neighbours = neighbours[:, 1:]

    row = torch.arange(x.size(0), device=x.device).view(-1, 1).repeat(1, neighbours.size(1))
    mask = neighbours >= 0
    row, col = row[mask], neighbours[mask]

    if flow == 'source_to_target':
        row, col = col, row
    return torch.stack([row, col], dim=0)


def oc_loss(
    beta: torch.Tensor,
    q: torch.Tensor,
    x: torch.Tensor,
    y: torch.Tensor,
    batch: torch.Tensor,
    sB: float = 1.0,
) -> Tuple[torch.Tensor, torch.Tensor]:
    """
    Object condensation potential loss (V_att + V_rep) of Kieseler, arXiv:2002.03605.

    The compiled ops take raw pointers: the CPU op expects host tensors, the CUDA op device tensors.

    Args:
        beta (Tensor): (N,) condensation strength in (0, 1)
        q (Tensor): (N,) charge = arctanh(beta)^2 + q_min
        x (Tensor): (N, D) clustering coordinates
        y (Tensor): (N,) object index per hit, 0 = noise
        batch (Tensor): (N,) sorted event index

    Returns:
        V_att, V_rep averaged over events
    """
    row_splits = _row_splits_from_batch(batch)
    y = y.to(torch.int32)
    if beta.is_cuda:
        V_att, V_rep = torch.ops.oc_cuda.oc_cuda(beta, q, x, y, row_splits)
    else:
        V_att, V_rep = torch.ops.oc_cpu.oc_cpu(beta, q, x, y, row_splits)
    n_events = row_splits.size(0) - 1
    return V_att / n_events, sB * V_rep / n_events


def oc_loss_python(beta, q, x, y, batch, sB=1.0):
    """
    Reference (slow, memory-hungry) pure-PyTorch implementation, used in the unit tests.
    """
    V_att = torch.zeros((), device=beta.device)
    V_rep = torch.zeros((), device=beta.device)
    n_events = int(batch.max().item()) + 1
    for i_event in range(n_events):
        sel = batch == i_event
        b, qq, xx, yy = beta[sel], q[sel], x[sel], y[sel]
        objects = torch.unique(yy[yy > 0])
        if objects.numel() == 0:
            continue
        # condensation point of every object: the hit with the highest beta
        idx_alpha = torch.stack([torch.argmax(b * (yy == o)) for o in objects])
        x_alpha, q_alpha = xx[idx_alpha], qq[idx_alpha]
        # (n_hits, n_objects)
        d2 = torch.cdist(xx, x_alpha) ** 2
        M = (yy.unsqueeze(1) == objects.unsqueeze(0)).float()
        V_att += (qq.unsqueeze(1) * q_alpha.unsqueeze(0) * d2 * M).sum() / xx.size(0)
        V_rep += (qq.unsqueeze(1) * q_alpha.unsqueeze(0) * torch.relu(1 - d2.sqrt()) * (1 - M)).sum() / xx.size(0)
    return V_att / n_events, sB * V_rep / n_events
