# Copyright (c) 2024, NVIDIA CORPORATION.  All rights reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

import logging
import os
import random
import shutil
import time
from typing import List, Literal, Optional, Tuple

import cudf
import dask.bag as db
import dask.dataframe as dd
import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from dask.distributed import progress

from nemo_curator.utils.distributed_utils import performance_report_if_with_ts_suffix
from nemo_curator.utils.file_utils import expand_outdir_and_mkdir

L2_DIST_TO_CENT_COL = "l2_dist_to_cent"
COSINE_DIST_TO_CENT_COL = "cosine_dist_to_cent"


def assign_and_sort_clusters(
    id_col: str,
    kmeans_centroids_file: str,
    nearest_cent_dir: str,
    output_sorted_clusters_dir: str,
    cluster_ids: List[int],
    embedding_col: str,
    sim_metric: Literal["cosine", "l2"] = "cosine",
    keep_hard: bool = True,
    kmeans_with_cos_dist: bool = True,
    logger: Optional[logging.Logger] = None,
    profile_dir: Optional[str] = None,
):
    """
    Args:
        id_col (str): The column name representing the unique identifier for each data point.
        kmeans_centroids_file (str): The path to the file containing centroids.
        nearest_cent_dir (str): The path to the nearest cent dir.
        output_sorted_clusters_dir (str): The directory where sorted clusters will be saved.
        cluster_ids (list): List of cluster ids to process.
        embedding_col (str): The column name storing the embeddings.
        sim_metric (str): The similarity metric to use for clustering, either "cosine" or "l2".
        keep_hard (bool): Whether to keep hard examples (farther from the centroid) or easy ones.
        kmeans_with_cos_dist (bool): Whether to use cosine distance for K-means clustering.
        logger (logging.Logger): A logger object to log messages.
        profile_dir (str): If specified directory to write dask profile.

    Returns:
        None
    """
    assert sim_metric in [
        "cosine",
        "l2",
    ], "sim_metric should be in ['cosine', 'l2']"

    if os.path.exists(output_sorted_clusters_dir):
        if logger:
            logger.info(
                f"Removing existing sorted cluster directory: {output_sorted_clusters_dir}"
            )
        shutil.rmtree(output_sorted_clusters_dir)

    expand_outdir_and_mkdir(output_sorted_clusters_dir)

    kmeans_centroids = np.load(kmeans_centroids_file)
    start_time = time.time()

    with performance_report_if_with_ts_suffix(profile_dir, "assign-and-sort-clusters"):
        cluster_ids_bag = db.from_sequence(cluster_ids, npartitions=len(cluster_ids))
        completed_count = cluster_ids_bag.map(
            lambda cluster_c: rank_within_cluster(
                id_col=id_col,
                nearest_cent_dir=nearest_cent_dir,
                output_sorted_clusters_dir=output_sorted_clusters_dir,
                centroids=kmeans_centroids,
                embedding_col=embedding_col,
                sim_metric=sim_metric,
                keep_hard=keep_hard,
                kmeans_with_cos_dist=kmeans_with_cos_dist,
                cluster_ids=[cluster_c],
            )
        ).compute()

        missing = len(cluster_ids) - sum(completed_count)
    if logger:
        logger.info(
            f"Completed {sum(completed_count)} clusters. Missing {missing} clusters."
        )
        logger.info(f"Time taken for Ranking within cluster: {time.time() - start_time}")
        logger.info("Success: Finished sorting clusters")


def rank_within_cluster(
    id_col: str,
    nearest_cent_dir: str,
    output_sorted_clusters_dir: str,
    centroids: np.ndarray,
    embedding_col: str,
    sim_metric: Literal["cosine", "l2"] = "cosine",
    keep_hard: bool = True,
    kmeans_with_cos_dist: bool = False,
    cluster_ids: List[int] = range(50000),
):
    """
    Sorts each cluster's items by their distance to the cluster centroid.
    """
    assert sim_metric in ["cosine", "l2"], "sim_metric should be in ['cosine', 'l2']"

    missing_files = 0
    for cluster_c in cluster_ids:
        cluster_c_path = os.path.join(nearest_cent_dir, f"nearest_cent={cluster_c}")
        if not os.path.exists(cluster_c_path):
            missing_files += 1
            continue

        cluster_df = cudf.read_parquet(
            cluster_c_path, columns=[embedding_col, id_col, L2_DIST_TO_CENT_COL, COSINE_DIST_TO_CENT_COL]
        )
        embeds = torch.Tensor(cluster_df[embedding_col].list.leaves.values.reshape(cluster_df.shape[0], -1))
        cluster_df = cluster_df.to_pandas()

        assert kmeans_with_cos_dist is False

        if sim_metric == "cosine":
            cluster_c_centroid = torch.Tensor(centroids[cluster_c])
            sim_to_cent = F.cosine_similarity(embeds, cluster_c_centroid)
            sim_to_cent = sim_to_cent.cpu().numpy()
            cluster_dists_to_cent = (1 - sim_to_cent).tolist()
        elif sim_metric == "l2":
            # Used when kmeans_with_cos_dist is True
            cluster_dists_to_cent = list(cluster_df[L2_DIST_TO_CENT_COL])

        cluster_label = np.full((len(cluster_df)), cluster_c).tolist()
        example_id = list(cluster_df[id_col])
        sort_descending = keep_hard
        cluster_sorted = sorted(
            zip(example_id, cluster_dists_to_cent, cluster_label),
            key=lambda x: x[2],
            reverse=sort_descending,
        )  # -- sort_descending = True for descending sort

        sorted_cluster_file_path = os.path.join(output_sorted_clusters_dir, f"cluster_{cluster_c}.npy")
        np.save(sorted_cluster_file_path, cluster_sorted)

    return len(cluster_ids) - missing_files


def _semdedup(
    cluster_reps: torch.Tensor, device: str
) -> Tuple[torch.Tensor, List[int]]:
    # compute pairwise cos sim between cluster items,
    # then replace to diagonal with zeros to ignore self similarity
    cluster_reps = cluster_reps.to(device)
    pair_w_sim_matrix = cluster_reps @ (cluster_reps.T)
    del cluster_reps
    pair_w_sim_matrix.fill_diagonal_(0.0)
    assert pair_w_sim_matrix.shape[0] == pair_w_sim_matrix.shape[1]

    triu_sim_mat = torch.triu(pair_w_sim_matrix, diagonal=1)

    M = torch.max(triu_sim_mat, dim=0)[0].cpu()
    M1 = torch.max(triu_sim_mat, dim=0)[1].cpu().numpy().tolist()
    return M, M1


def get_cluster_reps(
    cluster_id: int,
    emb_by_clust_dir: str,
    id_col: str,
    embedding_col: str,
    sorted_ids: np.ndarray,
) -> torch.Tensor:
    cluster_i_path = os.path.join(emb_by_clust_dir, f"nearest_cent={cluster_id}")
    cluster_reps = cudf.read_parquet(
        cluster_i_path, columns=[embedding_col, id_col]
    ).sort_values(by=id_col)
    num = cluster_reps.shape[0]

    df_ = pd.DataFrame(
        {"sorted_ids": sorted_ids, "inverse_sort": list(range(num))}
    ).sort_values(by="sorted_ids")
    cluster_reps["inverse_sort_id"] = df_["inverse_sort"].values
    cluster_reps = cluster_reps.sort_values(by="inverse_sort_id")

    cluster_reps = torch.as_tensor(
        cluster_reps[embedding_col].list.leaves.values.reshape(len(cluster_reps), -1),
        device="cuda",
    )
    return cluster_reps


def get_semantic_matches_per_cluster(
    cluster_id: int,
    emb_by_clust_dir: str,
    sorted_clusters_dir: str,
    id_col: str,
    id_col_type: str,
    eps_list: List[float],
    output_dir: str,
    embedding_col: str,
    which_to_keep: str,
) -> None:
    output_df_file_path = os.path.join(output_dir, f"cluster_{cluster_id}.parquet")

    sorted_file = os.path.join(sorted_clusters_dir, f"cluster_{cluster_id}.npy")
    if not os.path.exists(sorted_file):
        logging.info(f"{sorted_file} does not exist. Continue")
        return

    cluster_i = np.load(sorted_file)
    cluster_size = cluster_i.shape[0]
    logging.info(f"{cluster_id}: cluster_size: {cluster_size}")

    if cluster_size == 1:
        points_to_remove_df = pd.DataFrame()
        points_to_remove_df["indices"] = [0]
        for eps in eps_list:
            points_to_remove_df[f"eps={eps}"] = [False]
        points_to_remove_df.to_parquet(output_df_file_path)
        return

    clutser_items_indices = list(range(cluster_size))

    which_to_keep = which_to_keep.lower()
    if which_to_keep == "random":
        random.shuffle(clutser_items_indices)
        cluster_i = cluster_i[clutser_items_indices]
    elif which_to_keep == "easy":
        clutser_items_indices = clutser_items_indices[::-1]
        cluster_i = cluster_i[clutser_items_indices]

    text_ids = cluster_i[:, 0].astype(id_col_type)

    cluster_reps = get_cluster_reps(cluster_id, emb_by_clust_dir, id_col, embedding_col, text_ids)
    M, M1 = _semdedup(cluster_reps, "cuda")
    assert cluster_reps.shape[0] == len(text_ids)

    M1_id = [text_ids[m] for m in M1]

    points_to_remove_df = cudf.DataFrame()
    points_to_remove_df["indices"] = clutser_items_indices
    points_to_remove_df["id"] = text_ids
    points_to_remove_df["max_id"] = M1_id
    points_to_remove_df["cosine_sim_score"] = M.numpy().tolist()

    for eps in eps_list:
        eps_points_to_remove = M > 1 - eps
        points_to_remove_df[f"eps={eps}"] = eps_points_to_remove.tolist()

    points_to_remove_df.to_parquet(output_df_file_path)
    del cluster_reps
    torch.cuda.empty_cache()
