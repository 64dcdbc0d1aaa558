"""Post-processing for the Google Landmark Retrieval 2020 submission.

* alpha-query-expansion / database-side augmentation on the global descriptors
* k-reciprocal re-ranking (Zhong et al. CVPR 2017), GPU version adapted from the person re-id code
* kNN graph with faiss for diffusion-style reranking

All similarity matrices are built on the GPU in fp32 chunks; a 10k x 760k gallery needs ~30GB so
we chunk over queries (``chunk_size``).
"""

import gc
import logging

import numpy as np
import torch
import torch.nn.functional as F

try:
    import faiss
    HAS_FAISS = True
except ImportError:  # pragma: no cover
    HAS_FAISS = False

logger = logging.getLogger(__name__)


def get_device(gpu_id=0):
    if torch.cuda.is_available():
        return torch.device("cuda:{}".format(gpu_id))
    logger.warning("CUDA not available, reranking on CPU will be slow")
    return torch.device("cpu")


def _as_tensor(x, device):
    if isinstance(x, np.ndarray):
        x = torch.from_numpy(x)
    if not x.is_cuda:
        x = x.cuda(device)
    return x.float()


@torch.no_grad()
def topk_cosine(query, gallery, k=100, chunk_size=1024, device=None):
    """Return (scores, indices) of the k most similar gallery items for every query."""
    device = device or get_device()
    gallery = F.normalize(_as_tensor(gallery, device), dim=1)
    all_scores, all_idx = [], []
    for start in range(0, len(query), chunk_size):
        q = F.normalize(_as_tensor(query[start:start + chunk_size], device), dim=1)
        sim = q @ gallery.t()
        scores, idx = sim.topk(k, dim=1)
        all_scores.append(scores.cpu())
        all_idx.append(idx.cpu())
    return torch.cat(all_scores).numpy(), torch.cat(all_idx).numpy()


@torch.no_grad()
def alpha_query_expansion(feats, nn_idx, alpha=3.0, n_qe=2):
    """alpha-QE: weighted average of the descriptor with its n_qe nearest neighbours."""
    feats = torch.as_tensor(feats, dtype=torch.float32, device="cuda")
    nn_idx = torch.as_tensor(nn_idx[:, :n_qe + 1], dtype=torch.long, device=feats.device)
    neigh = feats[nn_idx]  # N x (n_qe+1) x D
    weights = (neigh * feats.unsqueeze(1)).sum(-1).clamp(min=0).pow(alpha)
    expanded = (neigh * weights.unsqueeze(-1)).sum(1)
    return F.normalize(expanded, dim=1).cpu().numpy()


def k_reciprocal_rerank(probFea, galFea, k1=20, k2=6, lambda_value=0.3, only_using_gpu=True):
    """k-reciprocal encoding re-ranking. Returns the final distance matrix (query x gallery)."""
    query_num = probFea.size(0)
    all_num = query_num + galFea.size(0)
    feat = torch.cat([probFea, galFea]).cuda()
    distmat = torch.pow(feat, 2).sum(dim=1, keepdim=True).expand(all_num, all_num) + \
        torch.pow(feat, 2).sum(dim=1, keepdim=True).expand(all_num, all_num).t()
    distmat.addmm_(feat, feat.t(), beta=1, alpha=-2)
    original_dist = distmat.cpu().numpy()
    del feat
    if not only_using_gpu:
        gallery_num = original_dist.shape[0]
    original_dist = np.transpose(original_dist / np.max(original_dist, axis=0))
    V = np.zeros_like(original_dist).astype(np.float16)
    initial_rank = np.argsort(original_dist).astype(np.int32)

    logger.info("starting re_ranking")
    for i in range(all_num):
        # k-reciprocal neighbors
        forward_k_neigh_index = initial_rank[i, :k1 + 1]
        backward_k_neigh_index = initial_rank[forward_k_neigh_index, :k1 + 1]
        fi = np.where(backward_k_neigh_index == i)[0]
        k_reciprocal_index = forward_k_neigh_index[fi]
        k_reciprocal_expansion_index = k_reciprocal_index
        for j in range(len(k_reciprocal_index)):
            candidate = k_reciprocal_index[j]
            candidate_forward_k_neigh_index = initial_rank[candidate, :int(np.around(k1 / 2)) + 1]
            candidate_backward_k_neigh_index = initial_rank[candidate_forward_k_neigh_index,
                                               :int(np.around(k1 / 2)) + 1]
            fi_candidate = np.where(candidate_backward_k_neigh_index == candidate)[0]
            candidate_k_reciprocal_index = candidate_forward_k_neigh_index[fi_candidate]
            if len(np.intersect1d(candidate_k_reciprocal_index, k_reciprocal_index)) > 2 / 3 * len(
                    candidate_k_reciprocal_index):
                k_reciprocal_expansion_index = np.append(k_reciprocal_expansion_index, candidate_k_reciprocal_index)

        k_reciprocal_expansion_index = np.unique(k_reciprocal_expansion_index)
        weight = np.exp(-original_dist[i, k_reciprocal_expansion_index])
        V[i, k_reciprocal_expansion_index] = weight / np.sum(weight)
    original_dist = original_dist[:query_num, ]
    if k2 != 1:
        V_qe = np.zeros_like(V, dtype=np.float16)
        for i in range(all_num):
            V_qe[i, :] = np.mean(V[initial_rank[i, :k2], :], axis=0)
        V = V_qe
        del V_qe
    del initial_rank
    invIndex = []
    for i in range(all_num):
        invIndex.append(np.where(V[:, i] != 0)[0])

    jaccard_dist = np.zeros_like(original_dist, dtype=np.float16)

    for i in range(query_num):
        temp_min = np.zeros(shape=[1, all_num], dtype=np.float16)
        indNonZero = np.where(V[i, :] != 0)[0]
        indImages = [invIndex[ind] for ind in indNonZero]
        for j in range(len(indNonZero)):
            temp_min[0, indImages[j]] = temp_min[0, indImages[j]] + np.minimum(V[i, indNonZero[j]],
                                                                               V[indImages[j], indNonZero[j]])
        jaccard_dist[i] = 1 - temp_min / (2 - temp_min)

    final_dist = jaccard_dist * (1 - lambda_value) + original_dist * lambda_value
    del original_dist
    del V
    del jaccard_dist
    final_dist = final_dist[:query_num, query_num:]
    gc.collect()
    torch.cuda.empty_cache()
    return final_dist


def build_knn_graph(feats, k=50, gpu_id=0):
    """Exact inner-product kNN over the whole index+test set with faiss on one GPU."""
    assert HAS_FAISS, "faiss is required for the kNN graph"
    feats = np.ascontiguousarray(feats.astype(np.float32))
    d = feats.shape[1]
    res = faiss.StandardGpuResources()
    res.setTempMemory(1024 * 1024 * 1024)
    flat_config = faiss.GpuIndexFlatConfig()
    flat_config.device = gpu_id
    flat_config.useFloat16 = True
    index = faiss.GpuIndexFlatIP(res, d, flat_config)
    index.add(feats)
    sims, ids = index.search(feats, k)
    return sims, ids


def diffusion_rerank(q_feats, db_feats, k=50, truncation=1000, alpha=0.99, gamma=3, n_iter=20):
    """Truncated graph diffusion (Iscen et al. CVPR 2017) on the kNN graph of the database."""
    sims, ids = build_knn_graph(np.concatenate([q_feats, db_feats]), k=k)
    n_q = len(q_feats)
    n = sims.shape[0]
    sims = np.maximum(sims, 0) ** gamma
    rows = np.repeat(np.arange(n), k)
    W = torch.sparse_coo_tensor(np.stack([rows, ids.reshape(-1)]), sims.reshape(-1), (n, n))
    W = W.coalesce()
    deg = torch.sparse.sum(W, dim=1).to_dense().clamp(min=1e-6)
    f = torch.zeros(n, n_q)
    f[torch.arange(n_q), torch.arange(n_q)] = 1.0
    y = f.clone()
    for _ in range(n_iter):
        f = alpha * torch.sparse.mm(W, f / deg.sqrt().unsqueeze(1)) / deg.sqrt().unsqueeze(1) + (1 - alpha) * y
    scores = f[n_q:].t().numpy()
    return np.argsort(-scores, axis=1)[:, :truncation]
