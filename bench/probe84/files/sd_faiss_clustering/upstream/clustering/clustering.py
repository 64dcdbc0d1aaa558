# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.
#
# This source code is licensed under the license found in the
# LICENSE file in the root directory of this source tree.

"""
K-means clustering of pre-computed (memmapped) embeddings with FAISS on GPU, followed by
the nearest-centroid assignment used by SemDeDup's per-cluster deduplication.
"""

import logging
import os
import pickle
import pprint
import time
from typing import Any, Dict, List, Optional

import faiss
import numpy as np
import submitit
import torch
import yaml

logger = logging.getLogger(__name__)


def get_logger(file_name="logs.log", level=logging.INFO, stdout=False):
    log = logging.getLogger(__name__)
    log.setLevel(level)
    fh = logging.FileHandler(file_name)
    fh.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    log.addHandler(fh)
    if stdout:
        log.addHandler(logging.StreamHandler())
    return log


class ComputeCentroids:
    def __init__(self, config_file: str):
        with open(config_file, "r") as y_file:
            self.params = yaml.load(y_file, Loader=yaml.FullLoader)

        self.seed = self.params["seed"]
        self.emb_memory_loc = self.params["emb_memory_loc"]
        self.paths_memory_loc = self.params["paths_memory_loc"]
        self.dataset_size = self.params["dataset_size"]
        self.emb_size = self.params["emb_size"]
        self.niter = self.params["niter"]
        self.ncentroids = self.params["ncentroids"]
        self.Kmeans_with_cos_dist = self.params["Kmeans_with_cos_dist"]
        self.save_folder = self.params["save_folder"]
        self.sorted_clusters_folder = self.params["sorted_clusters_file_loc"]
        self.use_gpu = self.params.get("use_gpu", True)
        self.max_points_per_centroid = self.params.get("max_points_per_centroid", 256)

    def _load_embeddings(self) -> np.ndarray:
        emb_memory = np.memmap(
            self.emb_memory_loc,
            dtype="float32",
            mode="r",
            shape=(self.dataset_size, self.emb_size),
        )
        return emb_memory

    def _train_kmeans(self, data: np.ndarray, log) -> faiss.Kmeans:
        d = data.shape[1]
        spherical = self.Kmeans_with_cos_dist
        kmeans = faiss.Kmeans(
            d,
            self.ncentroids,
            niter=self.niter,
            verbose=True,
            seed=self.seed,
            spherical=spherical,
            gpu=self.use_gpu,
            max_points_per_centroid=self.max_points_per_centroid,
        )
        st = time.time()
        kmeans.train(data)
        log.info(f"Time for clustering (mins): {(time.time()-st)/60:.2f}")
        return kmeans

    def _build_search_index(self, centroids: np.ndarray):
        d = centroids.shape[1]
        if self.Kmeans_with_cos_dist:
            cpu_index = faiss.IndexFlatIP(d)
        else:
            cpu_index = faiss.IndexFlatL2(d)
        ngpus = faiss.get_num_gpus()
        co = faiss.GpuMultipleClonerOptions()
        co.shard = True
        co.useFloat16 = True
        index = faiss.index_cpu_to_all_gpus(cpu_index, co=co, ngpu=ngpus)
        index.add(centroids)
        return index

    def _assign(self, index, data: np.ndarray, batch_size: int = 1_000_000):
        nearest_cent = np.empty(len(data), dtype=np.int64)
        dist_to_cent = np.empty(len(data), dtype=np.float32)
        for start in range(0, len(data), batch_size):
            chunk = np.ascontiguousarray(data[start : start + batch_size])
            D, I = index.search(chunk, 1)
            nearest_cent[start : start + len(chunk)] = I[:, 0]
            dist_to_cent[start : start + len(chunk)] = D[:, 0]
        return dist_to_cent, nearest_cent

    def run(self):
        os.makedirs(self.save_folder, exist_ok=True)
        log = get_logger(os.path.join(self.save_folder, "compute_centroids.log"), stdout=True)
        log.info(pprint.pformat(self.params))
        log.info(f"FAISS sees {faiss.get_num_gpus()} GPUs, torch sees {torch.cuda.device_count()}")

        data = self._load_embeddings()
        kmeans = self._train_kmeans(data, log)
        centroids = kmeans.centroids

        kmeans_obj_file = os.path.join(self.save_folder, "kmeans_index.pickle")
        with open(kmeans_obj_file, "wb") as file:
            pickle.dump(centroids, file)
        np.save(os.path.join(self.save_folder, "kmeans_centroids.npy"), centroids)
        log.info(f"Saved kmeans centroids to {kmeans_obj_file}")

        index = self._build_search_index(centroids)
        dist_to_cent, nearest_cent = self._assign(index, data)
        dist_to_cent, nearest_cent = dist_to_cent.squeeze(), nearest_cent.squeeze()

        np.save(os.path.join(self.save_folder, "dist_to_cent.npy"), dist_to_cent)
        np.save(os.path.join(self.save_folder, "nearest_cent.npy"), nearest_cent)
        log.info("Saved distances and assignments")
        return centroids


def sort_clusters_on_gpu(emb: np.ndarray, centroids: np.ndarray, nearest_cent: np.ndarray, cluster_id: int, keep_hard: bool = True):
    """
    Sort one cluster's members by cosine distance to its centroid (descending when
    keep_hard). Small enough to run per cluster on the local GPU.
    """
    member_ids = np.where(nearest_cent == cluster_id)[0]
    if len(member_ids) == 0:
        return member_ids, np.empty(0, dtype=np.float32)
    x = torch.from_numpy(np.ascontiguousarray(emb[member_ids])).cuda()
    c = torch.from_numpy(centroids[cluster_id]).cuda()
    dist = 1 - torch.nn.functional.cosine_similarity(x, c[None, :], dim=1)
    order = torch.argsort(dist, descending=keep_hard).cpu().numpy()
    return member_ids[order], dist.cpu().numpy()[order]


def launch(config_file: str, slurm_partition: str = "learnlab", timeout_min: int = 600):
    executor = submitit.AutoExecutor(folder="logs/clustering/%j")
    executor.update_parameters(
        slurm_partition=slurm_partition,
        nodes=1,
        tasks_per_node=1,
        gpus_per_node=8,
        cpus_per_task=80,
        slurm_constraint="volta32gb",
        timeout_min=timeout_min,
        mem_gb=480,
        name="semdedup-kmeans",
    )
    job = executor.submit(ComputeCentroids(config_file).run)
    print(f"Submitted clustering job {job.job_id}")
    return job


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--config-file", required=True)
    parser.add_argument("--local", action="store_true")
    args = parser.parse_args()
    if args.local:
        ComputeCentroids(args.config_file).run()
    else:
        launch(args.config_file)
