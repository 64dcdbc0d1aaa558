"""Mesh utilities for the Lagrangian MeshGraphNets variants (cloth / deforming plate).

* triangle -> edge conversion with world-space and mesh-space edge features
* cotangent Laplacian (sparse) used by the optional smoothness regulariser
* vertex normals for the cloth renderer

All functions keep tensors on the device of their inputs.
"""
from typing import Tuple

import torch


def triangles_to_edges(faces: torch.Tensor, deduplicate: bool = True) -> Tuple[torch.Tensor, torch.Tensor]:
    """Computes mesh edges from triangles (both directions), like the TF reference.

    Args:
        faces: (F, 3) long tensor of vertex indices.
    Returns:
        senders, receivers: (E,) long tensors.
    """
    edges = torch.cat([faces[:, 0:2], faces[:, 1:3], torch.stack([faces[:, 2], faces[:, 0]], dim=1)], dim=0)
    receivers = torch.min(edges, dim=1).values
    senders = torch.max(edges, dim=1).values
    packed = torch.stack([senders, receivers], dim=1)
    if deduplicate:
        packed = torch.unique(packed, dim=0)
    senders, receivers = packed.unbind(1)
    return torch.cat([senders, receivers], dim=0), torch.cat([receivers, senders], dim=0)


def edge_features(world_pos: torch.Tensor, mesh_pos: torch.Tensor, senders: torch.Tensor,
                  receivers: torch.Tensor) -> torch.Tensor:
    """Relative world/mesh displacements and their norms, shape (E, 2*D + 2)."""
    rel_world = world_pos[senders] - world_pos[receivers]
    rel_mesh = mesh_pos[senders] - mesh_pos[receivers]
    return torch.cat([
        rel_world, torch.linalg.vector_norm(rel_world, dim=-1, keepdim=True),
        rel_mesh, torch.linalg.vector_norm(rel_mesh, dim=-1, keepdim=True),
    ], dim=-1)


def _cot(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    cos = (a * b).sum(-1)
    sin = torch.linalg.vector_norm(torch.cross(a, b, dim=-1), dim=-1).clamp(min=1e-12)
    return cos / sin


def cotangent_laplacian(verts: torch.Tensor, faces: torch.Tensor) -> torch.Tensor:
    """Sparse (V, V) cotangent Laplacian L = D - W (positive semi-definite).

    Built as a COO tensor on the same device as `verts`; on GPU `torch.sparse.mm`
    with a (V, V) x (V, 3) product is ~10x cheaper than a dense matmul for V ~ 10k.
    """
    V = verts.shape[0]
    v0, v1, v2 = verts[faces[:, 0]], verts[faces[:, 1]], verts[faces[:, 2]]
    cot0 = _cot(v1 - v0, v2 - v0)  # angle at v0 -> edge (v1, v2)
    cot1 = _cot(v2 - v1, v0 - v1)  # angle at v1 -> edge (v2, v0)
    cot2 = _cot(v0 - v2, v1 - v2)  # angle at v2 -> edge (v0, v1)

    ii = torch.cat([faces[:, 1], faces[:, 2], faces[:, 0]])
    jj = torch.cat([faces[:, 2], faces[:, 0], faces[:, 1]])
    w = 0.5 * torch.cat([cot0, cot1, cot2])

    idx = torch.cat([torch.stack([ii, jj]), torch.stack([jj, ii])], dim=1)
    val = torch.cat([w, w])
    W = torch.sparse_coo_tensor(idx, val, (V, V)).coalesce()
    deg = torch.sparse.sum(W, dim=1).to_dense()
    diag_idx = torch.arange(V, device=verts.device)
    D = torch.sparse_coo_tensor(torch.stack([diag_idx, diag_idx]), deg, (V, V))
    return (D - W).coalesce()


def laplacian_smoothness_loss(pred_pos: torch.Tensor, faces: torch.Tensor, rest_pos: torch.Tensor) -> torch.Tensor:
    """|| L x ||^2 / V, with L computed on the rest (mesh-space) configuration."""
    with torch.no_grad():
        L = cotangent_laplacian(rest_pos, faces)
    Lx = torch.sparse.mm(L, pred_pos)
    return (Lx ** 2).sum() / pred_pos.shape[0]


def laplacian_csr(verts: torch.Tensor, faces: torch.Tensor) -> torch.Tensor:
    """CSR variant used by the conjugate-gradient projection in `cloth_postprocess.py`."""
    return cotangent_laplacian(verts, faces).to_sparse_csr()


def vertex_normals(verts: torch.Tensor, faces: torch.Tensor) -> torch.Tensor:
    """Area-weighted vertex normals, (V, 3)."""
    v0, v1, v2 = verts[faces[:, 0]], verts[faces[:, 1]], verts[faces[:, 2]]
    face_n = torch.cross(v1 - v0, v2 - v0, dim=-1)
    normals = torch.zeros_like(verts)
    for k in range(3):
        normals.index_add_(0, faces[:, k], face_n)
    return torch.nn.functional.normalize(normals, dim=-1, eps=1e-8)


def mesh_stats(verts: torch.Tensor, faces: torch.Tensor) -> dict:
    """Edge-length statistics used to pick the world-edge radius."""
    s, r = triangles_to_edges(faces)
    lengths = torch.linalg.vector_norm(verts[s] - verts[r], dim=-1)
    return {
        "num_verts": int(verts.shape[0]),
        "num_faces": int(faces.shape[0]),
        "edge_len_mean": lengths.mean().item(),
        "edge_len_min": lengths.min().item(),
        "edge_len_max": lengths.max().item(),
    }


def world_edges(world_pos: torch.Tensor, radius: float, mesh_senders: torch.Tensor,
                mesh_receivers: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """Collision ("world") edges between vertices closer than `radius` that are not mesh neighbours."""
    dist = torch.cdist(world_pos, world_pos)
    close = dist < radius
    close.fill_diagonal_(False)
    close[mesh_senders, mesh_receivers] = False
    s, r = close.nonzero(as_tuple=True)
    return s, r


if __name__ == "__main__":
    # quick self-test on a random flag mesh
    device = "cuda" if torch.cuda.is_available() else "cpu"
    n = 40
    xs, ys = torch.meshgrid(torch.linspace(0, 1, n), torch.linspace(0, 1, n), indexing="ij")
    verts = torch.stack([xs.flatten(), ys.flatten(), torch.zeros(n * n)], dim=-1).to(device)
    quads = torch.arange(n * n).view(n, n)[:-1, :-1].flatten()
    faces = torch.cat([torch.stack([quads, quads + 1, quads + n], 1),
                       torch.stack([quads + 1, quads + n + 1, quads + n], 1)]).to(device)
    print(mesh_stats(verts, faces))
    print("smoothness of flat sheet:", laplacian_smoothness_loss(verts, faces, verts).item())
