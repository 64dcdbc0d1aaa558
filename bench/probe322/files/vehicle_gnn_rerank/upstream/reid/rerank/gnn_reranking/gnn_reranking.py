"""
    Understanding Image Retrieval Re-Ranking: A Graph Neural Network Perspective

    Xuanmeng Zhang, Minyue Jiang, Zhedong Zheng, Xiao Tan, Errui Ding, Yi Yang

    Project Page : https://github.com/Xuanmeng-Zhang/gnn-re-ranking

    Paper: https://arxiv.org/abs/2012.07620v2

    ======================================================================

    On the Market-1501 dataset, we accelerate the re-ranking processing from 89.2s to 9.4ms
    with one K40m GPU, facilitating the real-world application of re-ranking.

    The two graph operators below are custom CUDA kernels built by setup.py
    (extension/adjacency_matrix and extension/propagation); X_q / X_g must be
    CUDA float tensors.
"""

import time

import numpy as np
import torch

import build_adjacency_matrix
import gnn_propagate


def gnn_reranking(X_q, X_g, k1, k2):
    query_num, gallery_num = X_q.shape[0], X_g.shape[0]

    X_u = torch.cat((X_q, X_g), axis=0)
    original_score = torch.mm(X_u, X_u.t())
    del X_u, X_q, X_g

    # initial ranking list
    S, initial_rank = original_score.topk(k=k1, dim=-1, largest=True, sorted=True)

    # stage 1
    A = build_adjacency_matrix.forward(initial_rank.float())
    S = S * S

    # stage 2
    if k2 != 1:
        for i in range(2):
            A = A + A.T
            A = gnn_propagate.forward(A, initial_rank[:, :k2].contiguous().float(), S[:, :k2].contiguous().float())
            A_norm = torch.norm(A, p=2, dim=1, keepdim=True)
            A = A.div(A_norm.expand_as(A))

    cosine_similarity = torch.mm(A[:query_num, ], A[query_num:, ].t())
    del A, S

    L = torch.sort(-cosine_similarity, dim=1)[1]
    L = L.data.cpu().numpy()
    return L


def gnn_reranking_timed(X_q, X_g, k1=26, k2=7, logger=None):
    """Same as :func:`gnn_reranking`, logs the wall-clock time of the re-ranking step."""
    start = time.time()
    indices = gnn_reranking(X_q, X_g, k1, k2)
    elapsed = time.time() - start
    if logger is not None:
        logger.info('GNN re-ranking ({} queries x {} gallery, k1={}, k2={}) took {:.3f}s'.format(
            X_q.shape[0], X_g.shape[0], k1, k2, elapsed))
    return indices


def evaluate_ranking_list(indices, q_label, g_label, q_cam, g_cam, max_rank=50):
    """CMC / mAP from a ranking list (indices into the gallery, one row per query)."""
    num_q = indices.shape[0]
    all_cmc = []
    all_ap = []
    for q_idx in range(num_q):
        order = indices[q_idx]
        remove = (g_label[order] == q_label[q_idx]) & (g_cam[order] == q_cam[q_idx])
        keep = np.invert(remove)
        matches = (g_label[order] == q_label[q_idx]).astype(np.int32)[keep]
        if not np.any(matches):
            continue
        cmc = matches.cumsum()
        cmc[cmc > 1] = 1
        all_cmc.append(cmc[:max_rank])
        num_rel = matches.sum()
        tmp_cmc = matches.cumsum() / (np.arange(len(matches)) + 1.0)
        all_ap.append((tmp_cmc * matches).sum() / num_rel)
    assert len(all_cmc) > 0, 'all query identities do not appear in gallery'
    all_cmc = np.asarray(all_cmc).astype(np.float32).sum(0) / len(all_cmc)
    return all_cmc, float(np.mean(all_ap))
