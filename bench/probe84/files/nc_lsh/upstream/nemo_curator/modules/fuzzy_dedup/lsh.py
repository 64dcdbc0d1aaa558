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

from __future__ import annotations

import logging
import math
import os
import time
import warnings
from typing import List, Optional, Tuple, Union

import cudf
import cupy as cp
import dask_cudf
import numpy as np
from dask import dataframe as dd

from nemo_curator.datasets import DocumentDataset
from nemo_curator.log import create_logger
from nemo_curator.utils.distributed_utils import performance_report_if_with_ts_suffix
from nemo_curator.utils.fuzzy_dedup_utils.io_utils import check_empty_buckets


class LSH:
    """
    Performs LSH on a MinhashSignatures
    """

    def __init__(
        self,
        cache_dir: str,
        num_hashes: int,
        num_buckets: int,
        buckets_per_shuffle: int = 1,
        false_positive_check: bool = False,
        logger: Union[logging.LoggerAdapter, str] = "./",
        id_fields: Union[str, list] = "id",
        minhash_field: str = "_minhash_signature",
        profile_dir: Optional[str] = None,
    ):
        """
        Parameters
        ----------
        cache_dir: str
          Needs to be specified, will compute & write duplicate id, bucket pairs to cache directory.
        num_hashes: Length of minhash signature
        num_buckets: Number of bands/buckets to create from the minhash signature.
          Hashes_per_signature = num_hashes / num_buckets
        buckets_per_shuffle: Number of bands/buckets to shuffle concurrently.
          but might lead to memory pressures and related errors.
        false_positive_check: bool
          If True, writes out buckets in a format compatible with downstream false positive check.
        logger: Existing logger to log to, or a path to a log directory.
        id_field: Columns in the Dataset denoting document ID.
        minhash_field: Column in the Dataset denoting minhash signature.
        profile_dir: str, Default None
          If specified directory to write dask profile
        """
        self.num_hashes = num_hashes
        self.num_buckets = num_buckets
        self.bucket_ranges = self._generate_bucket_ranges(
            self.num_buckets, self.num_hashes
        )
        self.buckets_per_shuffle = buckets_per_shuffle
        self.id_fields = [id_fields] if isinstance(id_fields, str) else id_fields
        self.minhash_field = minhash_field
        self.false_positive_check = false_positive_check
        self.cache_dir = cache_dir
        self.profile_dir = profile_dir

        if isinstance(logger, str):
            self._logger = create_logger(
                rank=0,
                log_file=os.path.join(logger, "LSH.log"),
                name="LSH",
            )
        else:
            self._logger = logger

    def _generate_bucket_ranges(
        self, num_buckets: int, num_hashes: int
    ) -> List[List[int]]:
        """
        Generates a list of indices for the minhash ranges given num_bands &
        num_hashes.
        """
        minhashes_per_bucket = num_hashes // num_buckets
        if num_hashes % num_buckets != 0:
            warnings.warn(
                f"num_hashes={num_hashes} is not divisible by num_buckets={num_buckets}; "
                "the trailing minhashes are ignored."
            )
        return [
            list(range(bucket * minhashes_per_bucket, (bucket + 1) * minhashes_per_bucket))
            for bucket in range(num_buckets)
        ]

    def minhash_to_buckets(
        self,
        df: "cudf.DataFrame",
        bucket_ranges: List[List[int]],
    ) -> "cudf.DataFrame":
        df2 = df[self.id_fields]
        for i, h in enumerate(bucket_ranges):
            indices = cudf.Series([h]).repeat(len(df2))
            df2[f"_bucket_{i}"] = f"b{i}_" + df[self.minhash_field].list.take(
                indices
            ).hash_values(method="md5")
        return df2

    def bucket_id_to_int(
        self,
        bucket_ddf: dask_cudf.DataFrame,
        bucket_col_name: str = "bucket_id",
        start_id: int = 0,
    ) -> Tuple[dask_cudf.DataFrame, int]:
        """
        Maps bucket ids to a contigious integer range from starting from start_id.
        """
        bucket_ddf[bucket_col_name] = bucket_ddf[bucket_col_name].astype("category")
        bucket_ddf[bucket_col_name] = bucket_ddf[bucket_col_name].cat.as_known()
        end_bucket_id = len(bucket_ddf[bucket_col_name].cat.categories) - 1 + start_id
        bucket_ddf[bucket_col_name] = (
            bucket_ddf[bucket_col_name].cat.codes.astype(np.uint64) + start_id
        )
        return bucket_ddf, end_bucket_id

    def _minhash_to_bucket_meta(self, df):
        meta = df._meta_nonempty[self.id_fields]
        meta[f"_bucket_{0}"] = "b0_" + cudf.Series(["a"] * len(meta)).str.pad(12)
        return meta.head(0)

    def lsh(
        self,
        write_path: str,
        df: "dask_cudf.DataFrame",
    ) -> bool:
        """
        Computes hash buckets for the DataFrame and writes them as parquet files to the specified path.

        Parameters:
            - write_path (str): The directory path to write parquet files.
            - df (dask_cudf.DataFrame): The input DataFrame with minhashes to be bucketed.
        Returns:
            are_buckets_empty: True if buckets were empty (no duplicates found), False otherwise.
        """
        wrote_buckets = False
        are_buckets_empty = True

        meta = self._minhash_to_bucket_meta(df)
        df = df.map_partitions(
            self.minhash_to_buckets,
            bucket_ranges=self.bucket_ranges,
            meta=meta,
        )
        bucket_start_id = 0
        for i in range(0, self.num_buckets, self.buckets_per_shuffle):
            bucket_columns = [
                f"_bucket_{i}" for i in range(i, min(self.num_buckets, i + self.buckets_per_shuffle))
            ]
            df2 = df.melt(
                id_vars=self.id_fields, value_name="_bucket_id", value_vars=bucket_columns
            )[self.id_fields + ["_bucket_id"]]

            df2 = df2.shuffle(
                on=["_bucket_id"],
                ignore_index=True,
                npartitions=max(1, 2 ** math.floor(math.log2(df2.npartitions))),
            ).map_partitions(lambda x: x[x["_bucket_id"].duplicated(keep=False)])

            df2 = df2.reset_index(drop=True)
            df2, end_id = self.bucket_id_to_int(
                df2, bucket_col_name="_bucket_id", start_id=bucket_start_id
            )
            # If bucketing return empty dataframe
            if end_id < bucket_start_id:
                continue
            bucket_start_id = end_id + 1
            are_buckets_empty = False

            wrote_buckets, are_buckets_empty = self._write_bucket_parquet(
                df2, write_path, wrote_buckets, are_buckets_empty
            )

        if are_buckets_empty:
            self._logger.info("No duplicate documents found during LSH")
            if os.path.exists(write_path):
                import shutil

                shutil.rmtree(write_path)

        return are_buckets_empty

    def _write_bucket_parquet(
        self,
        df: "dask_cudf.DataFrame",
        write_path: str,
        wrote_buckets: bool,
        are_buckets_empty: bool,
    ) -> tuple[bool, bool]:
        if not wrote_buckets:
            df.to_parquet(write_path, write_index=False, overwrite=True)
        else:
            df.to_parquet(write_path, write_index=False, append=True)
        return True, are_buckets_empty

    def __call__(self, dataset: DocumentDataset) -> DocumentDataset:
        df = dataset.df

        write_path = os.path.join(self.cache_dir, "_buckets.parquet")
        t0 = time.time()
        with performance_report_if_with_ts_suffix(self.profile_dir, "lsh-profile"):
            empty_result = self.lsh(write_path=write_path, df=df)

        self._logger.info(f"Time taken for LSH = {time.time() - t0}s and output written at {write_path}")
        if empty_result:
            return None
        buckets_df = dask_cudf.read_parquet(write_path, split_row_groups=False)
        return DocumentDataset(buckets_df)


def jaccard_from_signatures(sig_a: "cudf.Series", sig_b: "cudf.Series") -> "cp.ndarray":
    """
    Row-wise fraction of equal minhash values between two aligned list columns.
    Used by the optional false positive check before connected components.
    """
    a = cp.asarray(sig_a.list.leaves.values).reshape(len(sig_a), -1)
    b = cp.asarray(sig_b.list.leaves.values).reshape(len(sig_b), -1)
    return (a == b).mean(axis=1)


def bucket_sizes_histogram(buckets: "dask_cudf.DataFrame", bucket_col: str = "_bucket_id", bins: int = 32):
    """
    Summary of bucket sizes, logged after LSH to help choose num_buckets.
    """
    sizes = buckets.groupby(bucket_col).size().compute()
    counts, edges = np.histogram(sizes.values_host, bins=bins)
    return counts, edges


def optimal_num_buckets(threshold: float, num_hashes: int) -> Tuple[int, int]:
    """
    Pick (num_buckets, rows_per_bucket) whose S-curve crosses 0.5 closest to the
    Jaccard threshold. Pure host arithmetic.
    """
    best, best_err = (1, num_hashes), float("inf")
    for b in range(1, num_hashes + 1):
        if num_hashes % b:
            continue
        r = num_hashes // b
        crossing = (1.0 / b) ** (1.0 / r)
        err = abs(crossing - threshold)
        if err < best_err:
            best, best_err = (b, r), err
    return best
