"""
implementation of criteo dataset
"""

# pylint: disable=unused-argument,missing-docstring

import logging
import os
import sys
import time

import numpy as np
import sklearn.metrics
import torch

import dataset
from torchrec.datasets.criteo import (
    CAT_FEATURE_COUNT,
    DAYS,
    DEFAULT_CAT_NAMES,
    DEFAULT_INT_NAMES,
)
from torchrec.datasets.utils import Batch
from torchrec.sparse.jagged_tensor import KeyedJaggedTensor

logging.basicConfig(level=logging.INFO)
log = logging.getLogger("criteo")


class MultihotCriteo(dataset.Dataset):
    def __init__(
        self,
        data_path,
        name,
        num_embeddings_per_feature,
        pre_process,
        count=None,
        samples_to_aggregate_fix=None,
        samples_to_aggregate_min=None,
        samples_to_aggregate_max=None,
        samples_to_aggregate_quantile_file=None,
        samples_to_aggregate_trace_file=None,
        max_ind_range=-1,
        randomize="total",
        memory_map=False,
    ):
        super().__init__()

        self.count = count
        self.random_offline_sampler = False
        self.samples_to_aggregate_fix = samples_to_aggregate_fix
        self.samples_to_aggregate_min = samples_to_aggregate_min
        self.samples_to_aggregate_max = samples_to_aggregate_max
        self.samples_to_aggregate_quantile_file = samples_to_aggregate_quantile_file
        self.samples_to_aggregate_trace_file = samples_to_aggregate_trace_file

        if name == "multihot-criteo-sample":
            self.dense_path = os.path.join(data_path, "day_23_dense.npy")
            self.sparse_path = os.path.join(data_path, "day_23_sparse_multi_hot.npz")
            self.labels_path = os.path.join(data_path, "day_23_labels.npy")
        else:
            self.dense_path = os.path.join(data_path, "day_23_dense.npy")
            self.sparse_path = os.path.join(data_path, "day_23_sparse_multi_hot.npz")
            self.labels_path = os.path.join(data_path, "day_23_labels.npy")

        self.num_embeddings_per_feature = num_embeddings_per_feature
        self.keys = DEFAULT_CAT_NAMES
        self.items_in_memory = {}
        self.last_loaded = -1.0

        log.info("loading %s", self.dense_path)
        self.dense = np.load(self.dense_path, mmap_mode="r" if memory_map else None)
        self.labels = np.load(self.labels_path, mmap_mode="r" if memory_map else None)
        sparse = np.load(self.sparse_path)
        self.sparse = [sparse[str(i)] for i in range(CAT_FEATURE_COUNT)]
        self.num_samples = self.labels.shape[0] if count is None else count

        # build the offsets of the aggregated samples
        if self.samples_to_aggregate_fix is not None:
            n = self.samples_to_aggregate_fix
            self.item_sizes = [n] * (self.num_samples // n)
        else:
            rng = np.random.default_rng(123)
            lo = self.samples_to_aggregate_min or 100
            hi = self.samples_to_aggregate_max or 700
            sizes, total = [], 0
            while total < self.num_samples:
                s = int(rng.integers(lo, hi + 1))
                sizes.append(min(s, self.num_samples - total))
                total += sizes[-1]
            self.item_sizes = sizes
        self.offsets = np.concatenate([[0], np.cumsum(self.item_sizes)])
        with open(self.samples_to_aggregate_trace_file, "w") as f:
            f.write("\n".join(str(s) for s in self.item_sizes))

    def get_item_count(self):
        return len(self.item_sizes)

    def load_query_samples(self, sample_list):
        self.items_in_memory = {}
        for i in sample_list:
            self.items_in_memory[i] = self._build_batch(i)
        self.last_loaded = time.time()

    def unload_query_samples(self, sample_list):
        self.items_in_memory = {}

    def _build_batch(self, item):
        s, e = int(self.offsets[item]), int(self.offsets[item + 1])
        dense = torch.from_numpy(np.asarray(self.dense[s:e], dtype=np.float32))
        values, lengths = [], []
        for f in range(CAT_FEATURE_COUNT):
            rows = self.sparse[f][s:e]
            values.append(torch.from_numpy(rows.reshape(-1).astype(np.int64)))
            lengths.append(torch.full((e - s,), rows.shape[1], dtype=torch.int32))
        kjt = KeyedJaggedTensor(
            keys=self.keys,
            values=torch.cat(values),
            lengths=torch.cat(lengths),
        )
        labels = torch.from_numpy(np.asarray(self.labels[s:e], dtype=np.float32))
        return Batch(dense_features=dense, sparse_features=kjt, labels=labels)

    def get_samples(self, id_list):
        batches = [self.items_in_memory[i] for i in id_list]
        sizes = [b.labels.shape[0] for b in batches]
        idx_offsets = [0] + list(np.cumsum(sizes))
        labels = torch.cat([b.labels for b in batches])
        return batches, labels, idx_offsets


def pre_process_criteo_dlrm(x):
    return x


class DlrmPostProcess:
    def __init__(self):
        self.good = 0
        self.total = 0
        self.roc_auc = 0
        self.results = []

    def __call__(self, results, expected=None, result_dict=None):
        processed_results = []
        n = len(results)
        res = torch.cat(results).float().numpy()
        exp = expected.numpy()
        processed_results = np.column_stack((res, exp))
        self.good += int((np.round(res) == exp).sum())
        self.total += len(res)
        return processed_results

    def add_results(self, results):
        self.results.append(results)

    def start(self):
        self.good = 0
        self.total = 0
        self.roc_auc = 0
        self.results = []

    def finalize(self, result_dict, ds=False, output_dir=None):
        # AUC metric
        self.results = np.concatenate(self.results, axis=0)
        results, targets = list(zip(*self.results))
        results = np.array(results)
        targets = np.array(targets)
        self.roc_auc = sklearn.metrics.roc_auc_score(targets, results)

        result_dict["good"] = self.good
        result_dict["total"] = self.total
        result_dict["roc_auc"] = self.roc_auc
