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
import os
import time
import warnings
from typing import Optional, Union

import cudf
import numpy as np
from cudf import Series

from nemo_curator.datasets import DocumentDataset
from nemo_curator.log import create_logger
from nemo_curator.utils.distributed_utils import performance_report_if_with_ts_suffix
from nemo_curator.utils.fuzzy_dedup_utils.io_utils import check_empty_buckets


class MinHash:
    """
    Computes minhash signatures of a document corpus
    """

    def __init__(
        self,
        seed: int = 42,
        num_hashes: int = 260,
        char_ngrams: int = 24,
        use_64bit_hash: bool = False,
        logger: Union[logging.LoggerAdapter, str] = "./",
        id_field: str = "id",
        text_field: str = "text",
        profile_dir: Optional[str] = None,
        cache_dir: Optional[str] = None,
    ):
        """
        Parameters
        ----------
        seed: Seed for minhash permutations
        num_hashes: Length of minhash signature (No. of minhash permutations)
        char_ngrams: Width of text window (in characters) while computing minhashes.
        use_64bit_hash: Whether to use a 64 bit hash function.
        logger: Existing logger to log to, or a path to a log directory.
        id_field: Column in the Dataset denoting document ID.
        text_field: Column in the Dataset denoting document content.
        profile_dir: str, Default None
          If specified directory to write dask profile
        cache_dir: str, Default None
          If specified, will compute & write id, minhash pairs to directory
        """
        self.num_hashes = num_hashes
        self.char_ngram = char_ngrams
        if char_ngrams < 20:
            warnings.warn(
                "Using a small char_ngrams value might lead to a large number (~5%) of false positives during deduplication."
                " Using a value of at least 20 for char_ngrams is recommended."
            )
        self.seeds = self.generate_seeds(n_seeds=self.num_hashes, seed=seed)
        self.minhash_method = self.minhash64 if use_64bit_hash else self.minhash32

        self.id_field = id_field
        self.text_field = text_field

        if cache_dir is None and profile_dir is not None:
            warnings.warn(
                "cache_dir for intermediate outputs is required to generate profiles"
            )
        self.cache_dir = cache_dir
        self.profile_dir = profile_dir

        if isinstance(logger, str):
            self._logger = create_logger(
                rank=0,
                log_file=os.path.join(logger, "Minhash.log"),
                name="Minhash",
            )
        else:
            self._logger = logger

    def generate_seeds(self, n_seeds: int = 260, seed: int = 0) -> np.ndarray:
        """
        Generate seeds for all minhash permutations based on the given seed.
        """
        gen = np.random.RandomState(seed)
        return gen.randint(0, 1e6, size=n_seeds)

    def minhash32(
        self, ser: cudf.Series, seeds: np.ndarray, char_ngram: int
    ) -> cudf.Series:
        """
        Compute 32bit minhashes based on the MurmurHash3 algorithm
        """
        if not isinstance(ser, cudf.Series):
            raise TypeError("Expected data of type cudf.Series")
        seeds_a = cudf.Series(seeds, dtype="uint32")
        seeds_b = cudf.Series(seeds, dtype="uint32")
        return ser.str.minhash(a=seeds_a, b=seeds_b, seed=seeds[0], width=char_ngram)

    def minhash64(
        self, ser: cudf.Series, seeds: np.ndarray, char_ngram: int
    ) -> cudf.Series:
        """
        Compute 64bit minhashes based on the MurmurHash3 algorithm
        """
        if type(ser) is not cudf.Series:  # 64-bit minhash needs a libcudf string column
            raise TypeError("Expected data of type cudf.Series")
        seeds_a = cudf.Series(seeds, dtype="uint64")
        seeds_b = cudf.Series(seeds, dtype="uint64")
        return ser.str.minhash64(a=seeds_a, b=seeds_b, seed=seeds[0], width=char_ngram)

    def __call__(self, dataset: DocumentDataset) -> Union[str, DocumentDataset]:
        """
        Computes the minhash signatures for the given dataset.

        Parameters
        ----------
        dataset: DocumentDataset
          The input dataset to compute minhashes on. The text field must be
          stored in a cuDF-backed Dask DataFrame.

        Returns
        -------
        DocumentDataset
          A dataset with the id field and a "_minhash_signature" list column.
        """
        result = dataset.df[[self.id_field]]
        result["_minhash_signature"] = dataset.df[self.text_field].map_partitions(
            self.minhash_method,
            seeds=self.seeds,
            char_ngram=self.char_ngram,
            meta=Series(dtype="object"),
        )

        if self.cache_dir is None:
            return DocumentDataset(result)

        t0 = time.time()
        self._logger.info("Starting execution for Minhashes")
        with performance_report_if_with_ts_suffix(self.profile_dir, "minhash-profile"):
            result.to_parquet(
                os.path.join(self.cache_dir, "_minhashes.parquet"),
                write_index=False,
                overwrite=True,
            )
        self._logger.info(
            f"Time taken for Computing Minhashes (s): {time.time() - t0} "
        )
        return DocumentDataset(
            cudf_read_parquet_minhashes(os.path.join(self.cache_dir, "_minhashes.parquet"))
        )


def cudf_read_parquet_minhashes(path: str):
    import dask_cudf

    return dask_cudf.read_parquet(path, blocksize="2GB", aggregate_files=True)


def minhash_signature_density(sig: cudf.Series) -> float:
    """
    Diagnostic helper: fraction of unique values per signature row, averaged over
    the partition. Useful to spot degenerate inputs (e.g. documents shorter than
    char_ngrams which all hash to the same value).
    """
    exploded = sig.explode()
    n_rows = len(sig)
    if n_rows == 0:
        return 0.0
    uniq = exploded.groupby(level=0).nunique()
    return float(uniq.mean()) / float(len(sig.iloc[0]))


def estimate_jaccard(sig_a: np.ndarray, sig_b: np.ndarray) -> float:
    """
    Unbiased estimate of the Jaccard similarity between two documents from their
    minhash signatures. Works on host arrays (use `.to_numpy()` on a cuDF list row).
    """
    if sig_a.shape != sig_b.shape:
        raise ValueError("Signatures must have the same length")
    return float(np.mean(sig_a == sig_b))


def check_minhash_inputs(dataset: DocumentDataset, text_field: str, char_ngrams: int, logger=None):
    """
    Warn about very short documents, which produce identical signatures for every
    permutation and end up in every bucket.
    """
    lengths = dataset.df[text_field].str.len()
    n_short = int((lengths < char_ngrams).sum().compute())
    n_total = int(lengths.count().compute())
    if n_total == 0:
        check_empty_buckets(None)
    if n_short and logger is not None:
        logger.warning(
            f"{n_short}/{n_total} documents are shorter than char_ngrams={char_ngrams}; "
            "consider filtering them before MinHash."
        )
    return n_short, n_total
