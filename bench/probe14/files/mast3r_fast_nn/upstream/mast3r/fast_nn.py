# Copyright (C) 2024-present. All rights reserved.
# Licensed under CC BY-NC-SA 4.0 (non-commercial use only).
#
# --------------------------------------------------------
# Mutual nearest-neighbour matching of dense MASt3R descriptors.
# Two backends: a brute-force chunked torch matcher and a faiss GPU index.
# --------------------------------------------------------
import math

import numpy as np
import torch

try:
    import faiss
    import faiss.contrib.torch_utils  # noqa: F401  (lets faiss take torch tensors)
    HAS_FAISS = True
except ImportError:
    HAS_FAISS = False


def bruteforce_reciprocal_nns(A, B, device="cuda", block_size=None, dist="l2"):
    if isinstance(A, np.ndarray):
        A = torch.from_numpy(A).to(device)
    if isinstance(B, np.ndarray):
        B = torch.from_numpy(B).to(device)

    A = A.to(device)
    B = B.to(device)

    if dist == "l2":
        dist_func = torch.cdist
        argmin = torch.min
    elif dist == "dot":
        def dist_func(A, B):
            return A @ B.T

        def argmin(X, dim):
            sim, nn = torch.max(X, dim=dim)
            return sim.neg_(), nn
    else:
        raise ValueError(f"Unknown {dist=}")

    if block_size is None or len(A) * len(B) <= block_size**2:
        dists = dist_func(A, B)
        _, nn_A = argmin(dists, dim=1)
        _, nn_B = argmin(dists, dim=0)
    else:
        dis_A = torch.full((A.shape[0],), float("inf"), device=device, dtype=A.dtype)
        dis_B = torch.full((B.shape[0],), float("inf"), device=device, dtype=B.dtype)
        nn_A = torch.full((A.shape[0],), -1, device=device, dtype=torch.int64)
        nn_B = torch.full((B.shape[0],), -1, device=device, dtype=torch.int64)
        number_of_iteration_A = math.ceil(A.shape[0] / block_size)
        number_of_iteration_B = math.ceil(B.shape[0] / block_size)

        for i in range(number_of_iteration_A):
            A_i = A[i * block_size:(i + 1) * block_size]
            for j in range(number_of_iteration_B):
                B_j = B[j * block_size:(j + 1) * block_size]
                dists_blk = dist_func(A_i, B_j)  # A, B, 1
                min_A_i, argmin_A_i = argmin(dists_blk, dim=1)
                min_B_j, argmin_B_j = argmin(dists_blk, dim=0)

                col_mask = min_A_i < dis_A[i * block_size:(i + 1) * block_size]
                line_mask = min_B_j < dis_B[j * block_size:(j + 1) * block_size]

                dis_A[i * block_size:(i + 1) * block_size][col_mask] = min_A_i[col_mask]
                dis_B[j * block_size:(j + 1) * block_size][line_mask] = min_B_j[line_mask]

                nn_A[i * block_size:(i + 1) * block_size][col_mask] = argmin_A_i[col_mask] + (j * block_size)
                nn_B[j * block_size:(j + 1) * block_size][line_mask] = argmin_B_j[line_mask] + (i * block_size)
    nn_A = nn_A.cpu().numpy()
    nn_B = nn_B.cpu().numpy()
    return nn_A, nn_B


class FaissGpuNN:
    """Exact inner-product / L2 search on the GPU with faiss."""

    def __init__(self, db_pts, dist="l2", gpu_id=0):
        assert HAS_FAISS, "pip install faiss-gpu"
        self.res = faiss.StandardGpuResources()
        self.res.setTempMemory(512 * 1024 * 1024)
        d = db_pts.shape[1]
        cpu_index = faiss.IndexFlatL2(d) if dist == "l2" else faiss.IndexFlatIP(d)
        self.index = faiss.index_cpu_to_gpu(self.res, gpu_id, cpu_index)
        self.index.add(db_pts.contiguous().float())

    def query(self, queries, k=1):
        D, I = self.index.search(queries.contiguous().float(), k)
        return D, I


def merge_corres(idx1, idx2, shape1=None, shape2=None, ret_xy=True, ret_index=False):
    assert idx1.dtype == idx2.dtype == np.int32

    # unique and sort along idx1
    corres = np.unique(np.c_[idx2, idx1].view(np.int64), return_index=ret_index)
    if ret_index:
        corres, indices = corres
    xy2, xy1 = corres[:, None].view(np.int32).T

    if ret_xy:
        assert shape1 and shape2
        xy1 = np.unravel_index(xy1, shape1)
        xy2 = np.unravel_index(xy2, shape2)
        if ret_xy != "y_x":
            xy1 = xy1[0].base[:, ::-1]
            xy2 = xy2[0].base[:, ::-1]

    if ret_index:
        return xy1, xy2, indices
    return xy1, xy2


def fast_reciprocal_NNs(pts1, pts2, subsample_or_initxy1=8, ret_xy=True, pixel_tol=0, ret_basin=False,
                        device="cuda", max_iter=10, use_faiss=True, **matcher_kw):
    H1, W1, DIM1 = pts1.shape
    H2, W2, DIM2 = pts2.shape
    assert DIM1 == DIM2

    pts1 = pts1.reshape(-1, DIM1)
    pts2 = pts2.reshape(-1, DIM2)

    if isinstance(subsample_or_initxy1, int) and pixel_tol == 0:
        S = subsample_or_initxy1
        y1, x1 = np.mgrid[S // 2:H1:S, S // 2:W1:S].reshape(2, -1)
        max_iter = 10
    else:
        x1, y1 = subsample_or_initxy1
        if isinstance(x1, torch.Tensor):
            x1 = x1.cpu().numpy()
        if isinstance(y1, torch.Tensor):
            y1 = y1.cpu().numpy()

    xy1 = np.int32(np.unique(x1 + W1 * y1))  # make sure there's no doublons
    xy2 = np.full_like(xy1, -1)
    old_xy1 = xy1.copy()
    old_xy2 = xy2.copy()

    if use_faiss and HAS_FAISS:
        nn2 = FaissGpuNN(pts2.to(device), **matcher_kw)
        nn1 = FaissGpuNN(pts1.to(device), **matcher_kw)
        query2 = lambda q: nn2.query(q.to(device))[1].squeeze(-1).cpu().numpy()
        query1 = lambda q: nn1.query(q.to(device))[1].squeeze(-1).cpu().numpy()
    else:
        query2 = lambda q: bruteforce_reciprocal_nns(q, pts2, device=device, block_size=2**13)[0]
        query1 = lambda q: bruteforce_reciprocal_nns(q, pts1, device=device, block_size=2**13)[0]

    for _ in range(max_iter):
        xy2[:] = query2(pts1[xy1])
        xy1[:] = query1(pts2[xy2])
        if (old_xy1 == xy1).all() and (old_xy2 == xy2).all():
            break
        old_xy1[:] = xy1
        old_xy2[:] = xy2

    converged = (old_xy1 == xy1).all()
    if not converged:
        print(f"fast_reciprocal_NNs did not converge after {max_iter} iterations")

    xy1, xy2 = merge_corres(xy1, xy2, (H1, W1), (H2, W2), ret_xy=ret_xy)
    return xy1, xy2
