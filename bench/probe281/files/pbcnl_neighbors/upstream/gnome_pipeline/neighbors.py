"""Periodic neighbour lists for crystal graphs.

Three backends, chosen automatically:

* ``pbc_neighbors._C.radius_pbc_cuda`` -- fused cell-list kernel (csrc/cuda), by
  far the fastest for large relaxation batches;
* ``pbc_neighbors._C.radius_pbc_cpu`` -- OpenMP version of the same algorithm;
* a pure-PyTorch O(N^2 * n_images) fallback that works on any device and is
  used for tests and when the extension is not installed.

All backends return ``edge_index`` (2, E) with the *source* atom first, the
integer cell shifts (E, 3) and the number of edges per structure.
"""
from __future__ import annotations

import math
import warnings
from typing import Optional, Tuple

import torch

try:
    from pbc_neighbors import _C as _nl_ext

    HAS_EXT = True
    # the wheel may have been built without nvcc (CPU-only docker stage)
    _ext_has_cuda = hasattr(_nl_ext, "radius_pbc_cuda")
except ImportError:  # pragma: no cover - depends on the environment
    _nl_ext = None
    HAS_EXT = False
    _ext_has_cuda = False

__all__ = ["neighbor_list", "num_images_per_dim", "HAS_EXT"]


def num_images_per_dim(cell: torch.Tensor, cutoff: float) -> torch.Tensor:
    """Number of periodic images needed along each lattice vector so that all
    neighbours within ``cutoff`` are found. cell: (B, 3, 3) -> (B, 3) long."""
    # distance between opposite faces = volume / |a_j x a_k|
    a, b, c = cell[:, 0], cell[:, 1], cell[:, 2]
    vol = torch.abs(torch.sum(a * torch.cross(b, c, dim=-1), dim=-1))
    heights = torch.stack(
        [
            vol / torch.linalg.norm(torch.cross(b, c, dim=-1), dim=-1),
            vol / torch.linalg.norm(torch.cross(c, a, dim=-1), dim=-1),
            vol / torch.linalg.norm(torch.cross(a, b, dim=-1), dim=-1),
        ],
        dim=-1,
    )
    return torch.ceil(cutoff / heights).long()


def _shift_grid(n_max: torch.Tensor, device: torch.device) -> torch.Tensor:
    rng = [torch.arange(-int(n), int(n) + 1, device=device) for n in n_max.tolist()]
    return torch.cartesian_prod(*rng).to(torch.float32)


def _neighbor_list_torch(
    pos: torch.Tensor,
    cell: torch.Tensor,
    pbc: torch.Tensor,
    cutoff: float,
    batch: torch.Tensor,
    max_neighbors: Optional[int],
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    device = pos.device
    n_struct = cell.shape[0]
    n_img = num_images_per_dim(cell, cutoff) * pbc.long()
    shifts = _shift_grid(n_img.max(dim=0).values, device)  # (S, 3), shared upper bound

    edges, cell_shifts, counts = [], [], []
    offset = 0
    natoms = torch.bincount(batch, minlength=n_struct)
    for s in range(n_struct):
        n = int(natoms[s])
        p = pos[offset : offset + n]
        lattice = cell[s]
        # (S, 3) cartesian shifts of the periodic images
        cart_shift = shifts @ lattice
        # (n, S, n) displacement j + shift - i
        disp = p[None, None, :, :] + cart_shift[None, :, None, :] - p[:, None, None, :]
        dist2 = (disp * disp).sum(-1)
        mask = dist2 <= cutoff * cutoff
        # remove self-interaction in the home cell
        home = (shifts.abs().sum(-1) == 0)
        mask[:, home, :] &= ~torch.eye(n, dtype=torch.bool, device=device)[:, None, :].expand(n, int(home.sum()), n)
        i, k, j = torch.nonzero(mask, as_tuple=True)
        if max_neighbors is not None:
            d = dist2[i, k, j]
            order = torch.argsort(i * (cutoff * cutoff + 1.0) + d)
            i, k, j, d = i[order], k[order], j[order], d[order]
            rank = torch.arange(i.numel(), device=device) - torch.searchsorted(i, i)
            keep = rank < max_neighbors
            i, k, j = i[keep], k[keep], j[keep]
        edges.append(torch.stack([j + offset, i + offset]))
        cell_shifts.append(shifts[k])
        counts.append(i.numel())
        offset += n

    edge_index = torch.cat(edges, dim=1) if edges else pos.new_zeros((2, 0), dtype=torch.long)
    cell_shift = torch.cat(cell_shifts, dim=0) if cell_shifts else pos.new_zeros((0, 3))
    num_edges = torch.tensor(counts, device=device, dtype=torch.long)
    return edge_index, cell_shift, num_edges


def neighbor_list(
    pos: torch.Tensor,
    cell: torch.Tensor,
    cutoff: float,
    batch: Optional[torch.Tensor] = None,
    pbc: Optional[torch.Tensor] = None,
    max_neighbors: Optional[int] = None,
    use_ext: bool = True,
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Radius graph under periodic boundary conditions.

    Args:
        pos: (N, 3) cartesian positions
        cell: (B, 3, 3) lattice vectors as rows
        cutoff: radius in Angstrom
        batch: (N,) structure index of each atom (defaults to a single structure)
        pbc: (B, 3) bool, periodicity per direction (defaults to fully periodic)
        max_neighbors: keep at most this many nearest neighbours per atom
        use_ext: allow the compiled extension
    """
    if batch is None:
        batch = torch.zeros(pos.shape[0], dtype=torch.long, device=pos.device)
    if cell.dim() == 2:
        cell = cell[None]
    if pbc is None:
        pbc = torch.ones(cell.shape[0], 3, dtype=torch.bool, device=pos.device)

    # the kernels expect fp32, contiguous, sorted-by-structure input
    pos = pos.contiguous().to(torch.float32)
    cell = cell.contiguous().to(torch.float32)
    max_nb = -1 if max_neighbors is None else int(max_neighbors)

    if use_ext and _ext_has_cuda and pos.is_cuda:
        edge_index, shifts, counts = _nl_ext.radius_pbc_cuda(pos, cell, pbc, batch, float(cutoff), max_nb)
    elif use_ext and HAS_EXT:
        # kernels assert their inputs live in host memory
        edge_index, shifts, counts = _nl_ext.radius_pbc_cpu(pos, cell, pbc, batch, float(cutoff), max_nb)
    else:
        if use_ext and not HAS_EXT:
            warnings.warn(
                "pbc_neighbors extension not found; falling back to the O(N^2) PyTorch "
                "implementation. Build csrc/ for GPU relaxations.",
                RuntimeWarning,
                stacklevel=2,
            )
        edge_index, shifts, counts = _neighbor_list_torch(pos, cell, pbc, cutoff, batch, max_neighbors)
    return edge_index, shifts, counts


def edge_vectors(
    pos: torch.Tensor, cell: torch.Tensor, edge_index: torch.Tensor, shifts: torch.Tensor, batch: torch.Tensor
) -> torch.Tensor:
    """Cartesian vectors r_j + S @ cell - r_i for each edge (source j, target i)."""
    src, dst = edge_index
    cart_shift = torch.einsum("ei,eij->ej", shifts.to(pos.dtype), cell[batch[dst]])
    return pos[src] + cart_shift - pos[dst]


def _self_test(device: str = "cuda") -> None:
    """Compare the extension against the reference implementation on random cells."""
    torch.manual_seed(0)
    cell = torch.diag_embed(torch.rand(4, 3) * 4 + 4).to(device)
    natoms = torch.tensor([5, 8, 3, 12])
    batch = torch.repeat_interleave(torch.arange(4), natoms).to(device)
    frac = torch.rand(int(natoms.sum()), 3, device=device)
    pos = torch.einsum("ni,nij->nj", frac, cell[batch])
    ref = _neighbor_list_torch(pos, cell, torch.ones(4, 3, dtype=torch.bool, device=device), 5.0, batch, None)
    out = neighbor_list(pos, cell, 5.0, batch=batch)
    assert ref[2].sum() == out[2].sum(), (ref[2], out[2])
    print(f"ok: {int(out[2].sum())} edges on {device} (ext={HAS_EXT}, cuda kernels={_ext_has_cuda})")


if __name__ == "__main__":
    _self_test("cuda" if torch.cuda.is_available() else "cpu")
