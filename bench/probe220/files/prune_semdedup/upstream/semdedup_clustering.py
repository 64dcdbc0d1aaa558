"""SemDeDup-style semantic de-duplication for data pruning.

1. embed the training set with a frozen encoder (CLIP ViT-B/16 image tower or an SSL ResNet-50),
2. k-means the L2-normalised embeddings with faiss,
3. inside every cluster drop all but one example of each group whose cosine similarity exceeds 1 - eps.

    torchrun --nproc_per_node=8 semdedup_clustering.py --config configs/el2n_cifar10.yaml --emb_path embs.npy
"""
import argparse
import math
import os
import time
from types import SimpleNamespace

import faiss
import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
import yaml


def to_ns(d):
    return SimpleNamespace(**{k: to_ns(v) if isinstance(v, dict) else v for k, v in d.items()})


def faiss_kmeans(embs, num_clusters, niter, seed, use_gpu):
    d = embs.shape[1]
    kmeans = faiss.Kmeans(d, num_clusters, niter=niter, verbose=True, seed=seed, spherical=True,
                          gpu=use_gpu, max_points_per_centroid=2048)
    t0 = time.time()
    kmeans.train(embs)
    print("k-means: {} points, {} clusters, {:.1f}s".format(embs.shape[0], num_clusters, time.time() - t0))
    return kmeans.centroids


def assign_clusters(embs, centroids, use_gpu, device_id=0):
    d = centroids.shape[1]
    if use_gpu:
        res = faiss.StandardGpuResources()
        res.setTempMemory(512 * 1024 * 1024)
        cfg = faiss.GpuIndexFlatConfig()
        cfg.device = device_id
        cfg.useFloat16 = False
        index = faiss.GpuIndexFlatIP(res, d, cfg)
    else:
        index = faiss.IndexFlatIP(d)
    index.add(centroids)
    dist_to_c, assign = index.search(embs, 1)
    return assign[:, 0], dist_to_c[:, 0]


@torch.no_grad()
def dedup_cluster(cluster_embs, eps, device):
    """Return a keep-mask for one cluster (sorted by distance to the centroid, farthest first)."""
    x = torch.from_numpy(cluster_embs).cuda(device)
    x = F.normalize(x, dim=1)
    n = x.shape[0]
    if n < 2:
        return np.ones(n, dtype=bool)
    sim = x @ x.T
    sim = torch.triu(sim, diagonal=1)
    max_sim = sim.max(dim=0).values
    keep = (max_sim <= 1 - eps).cpu().numpy()
    return keep


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--config", required=True)
    p.add_argument("--emb_path", required=True, help=".npy file with [N, d] float32 embeddings")
    p.add_argument("--out", default="./semdedup_keep.npy")
    args = p.parse_args()

    with open(args.config) as f:
        cfg = to_ns(yaml.safe_load(f))
    sd = cfg.semdedup

    distributed = "WORLD_SIZE" in os.environ and int(os.environ["WORLD_SIZE"]) > 1
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    if distributed:
        dist.init_process_group(backend=cfg.dist.backend, init_method=cfg.dist.init_method)
    rank = dist.get_rank() if distributed else 0
    world = dist.get_world_size() if distributed else 1
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)

    embs = np.load(args.emb_path).astype(np.float32)
    faiss.normalize_L2(embs)

    # k-means once on rank 0, centroids broadcast to everybody
    if rank == 0:
        centroids = faiss_kmeans(embs, sd.num_clusters, sd.niter, cfg.seed, sd.use_gpu)
        centroids_t = torch.from_numpy(centroids).to(device)
    else:
        centroids_t = torch.empty(sd.num_clusters, embs.shape[1], device=device)
    if distributed:
        dist.broadcast(centroids_t, src=0)
    centroids = centroids_t.cpu().numpy()

    assign, _ = assign_clusters(embs, centroids, sd.use_gpu, device_id=local_rank)

    # clusters are split round-robin over ranks
    keep = np.zeros(len(embs), dtype=bool)
    for c in range(rank, sd.num_clusters, world):
        members = np.where(assign == c)[0]
        if len(members) == 0:
            continue
        d_to_c = embs[members] @ centroids[c]
        members = members[np.argsort(d_to_c)]  # farthest from the centroid first
        keep[members] = dedup_cluster(embs[members], sd.eps, device)
        if c % 20 == 0:
            torch.cuda.empty_cache()

    keep_t = torch.from_numpy(keep).to(device)
    if distributed:
        dist.all_reduce(keep_t, op=dist.ReduceOp.MAX)
    keep = keep_t.cpu().numpy()

    if rank == 0:
        np.save(args.out, np.where(keep)[0])
        print("SemDeDup: kept {} / {} ({:.1f}%)".format(keep.sum(), len(keep), 100.0 * keep.mean()))

    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
