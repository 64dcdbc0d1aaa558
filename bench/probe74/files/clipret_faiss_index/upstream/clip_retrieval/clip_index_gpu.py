"""Build (and sanity-check) a knn index over clip embeddings with faiss on the GPUs.

autofaiss picks the index string; training the IVF quantizer and adding the
embeddings is done on all visible GPUs, the trained index is then moved back to
CPU and written to disk for the clip back (which serves from CPU memory).
"""

import glob
import json
import logging
import os
import time

import fire
import numpy as np
import faiss
import torch
from autofaiss import build_index
from autofaiss.indices.index_utils import set_search_hyperparameters

LOGGER = logging.getLogger(__name__)


def load_embeddings(embeddings_folder, max_files=None):
    files = sorted(glob.glob(os.path.join(embeddings_folder, "*.npy")))
    if max_files is not None:
        files = files[:max_files]
    arrays = [np.load(f).astype("float32") for f in files]
    return np.concatenate(arrays, axis=0)


def gpu_resources(n_gpus, temp_memory_gb=2):
    """One StandardGpuResources per GPU with a bounded scratch allocation."""
    resources = []
    for _ in range(n_gpus):
        res = faiss.StandardGpuResources()
        res.setTempMemory(temp_memory_gb * 1024 * 1024 * 1024)
        resources.append(res)
    return resources


def train_ivfpq_on_gpus(xb, index_key, sample_size=2_000_000, n_gpus=None):
    """Train an IVF-PQ index on GPU, add all vectors, return a CPU index."""
    n_gpus = n_gpus or faiss.get_num_gpus()
    d = xb.shape[1]
    cpu_index = faiss.index_factory(d, index_key, faiss.METRIC_INNER_PRODUCT)

    co = faiss.GpuMultipleClonerOptions()
    co.useFloat16 = True
    co.useFloat16CoarseQuantizer = True
    co.shard = True
    co.indicesOptions = faiss.INDICES_CPU

    resources = gpu_resources(n_gpus)
    vres = faiss.GpuResourcesVector()
    vdev = faiss.Int32Vector()
    for i, res in enumerate(resources):
        vdev.push_back(i)
        vres.push_back(res)
    gpu_index = faiss.index_cpu_to_gpu_multiple(vres, vdev, cpu_index, co)

    rng = np.random.default_rng(0)
    sample = xb[rng.choice(len(xb), size=min(sample_size, len(xb)), replace=False)]
    t0 = time.time()
    gpu_index.train(sample)
    LOGGER.info("trained %s on %d vectors in %.1fs (%d gpus)", index_key, len(sample), time.time() - t0, n_gpus)

    t0 = time.time()
    batch = 1_000_000
    for start in range(0, len(xb), batch):
        gpu_index.add(xb[start:start + batch])
    LOGGER.info("added %d vectors in %.1fs", len(xb), time.time() - t0)

    return faiss.index_gpu_to_cpu(gpu_index)


def exact_topk_torch(queries, xb, k=10, chunk=262_144):
    """Brute-force inner-product top-k on the GPU, used as ground truth for recall@k."""
    q = torch.from_numpy(queries).cuda().half()
    best_scores = None
    best_ids = None
    for start in range(0, len(xb), chunk):
        block = torch.from_numpy(xb[start:start + chunk]).cuda().half()
        scores = q @ block.T
        top_s, top_i = scores.topk(min(k, block.shape[0]), dim=1)
        top_i = top_i + start
        if best_scores is None:
            best_scores, best_ids = top_s, top_i
        else:
            s = torch.cat([best_scores, top_s], dim=1)
            i = torch.cat([best_ids, top_i], dim=1)
            best_scores, order = s.topk(k, dim=1)
            best_ids = torch.gather(i, 1, order)
    return best_scores.float().cpu().numpy(), best_ids.cpu().numpy()


def recall_at_k(index, queries, gt_ids, k=10):
    _, ids = index.search(queries, k)
    hits = 0
    for row, gt in zip(ids, gt_ids):
        hits += len(set(row.tolist()) & set(gt.tolist()))
    return hits / (len(queries) * k)


def main(
    embeddings_folder="embeddings/img_emb",
    index_folder="index",
    index_key=None,
    max_index_memory_usage="32G",
    current_memory_available="64G",
    use_gpu=True,
    n_queries=1000,
    nprobe=64,
):
    os.makedirs(index_folder, exist_ok=True)
    xb = load_embeddings(embeddings_folder)
    LOGGER.info("loaded %s embeddings of dim %d", f"{len(xb):,}", xb.shape[1])

    if index_key is None:
        # let autofaiss choose the index string for the memory budget, but do not let it build
        _, infos = build_index(
            embeddings=xb,
            max_index_memory_usage=max_index_memory_usage,
            current_memory_available=current_memory_available,
            should_be_memory_mappable=True,
            save_on_disk=False,
            use_gpu=False,
            index_infos_path=os.path.join(index_folder, "autofaiss_infos.json"),
        )
        index_key = infos["index_key"]

    if use_gpu:
        index = train_ivfpq_on_gpus(xb, index_key)
    else:
        index = faiss.index_factory(xb.shape[1], index_key, faiss.METRIC_INNER_PRODUCT)
        index.train(xb)
        index.add(xb)

    set_search_hyperparameters(index, f"nprobe={nprobe}", use_gpu=False)
    faiss.write_index(index, os.path.join(index_folder, "image.index"))

    # recall against exact search on a small query sample
    rng = np.random.default_rng(1)
    queries = xb[rng.choice(len(xb), size=n_queries, replace=False)]
    _, gt_ids = exact_topk_torch(queries, xb, k=10)
    rec = recall_at_k(index, queries, gt_ids, k=10)
    LOGGER.info("recall@10 vs exact: %.4f", rec)
    with open(os.path.join(index_folder, "index_report.json"), "w") as f:
        json.dump({"index_key": index_key, "n": int(len(xb)), "recall@10": rec, "nprobe": nprobe}, f)


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    fire.Fire(main)
