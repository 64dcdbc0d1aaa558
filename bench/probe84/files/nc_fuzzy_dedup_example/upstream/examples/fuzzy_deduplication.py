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

import argparse
import os
import time

import dask

from nemo_curator import FuzzyDuplicates, FuzzyDuplicatesConfig
from nemo_curator.datasets import DocumentDataset
from nemo_curator.utils.distributed_utils import get_client, write_to_disk
from nemo_curator.utils.script_utils import ArgumentHelper


def pre_imports():
    import cudf  # noqa: F401


def attach_args(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    ArgumentHelper(parser).add_distributed_args()
    parser.add_argument("--dataset-dir", type=str, required=True, help="Directory of .jsonl shards")
    parser.add_argument("--cache-dir", type=str, default="./fuzzy_cache")
    parser.add_argument("--output-dir", type=str, default="./fuzzy_dedup_output")
    parser.add_argument("--id-field", type=str, default="id")
    parser.add_argument("--text-field", type=str, default="text")
    parser.add_argument("--num-buckets", type=int, default=20)
    parser.add_argument("--hashes-per-bucket", type=int, default=13)
    parser.add_argument("--jaccard-threshold", type=float, default=0.8)
    parser.add_argument("--files-per-partition", type=int, default=4)
    parser.add_argument("--remove-duplicates", action="store_true")
    return parser


def main(args):
    dataset_dir = args.dataset_dir
    log_dir = os.path.join(args.cache_dir, "logs")
    cache_dir = args.cache_dir
    output_dir = args.output_dir
    dataset_id_field = args.id_field
    dataset_text_field = args.text_field

    filetype = "jsonl"

    # Fuzzy dup calculation only supports the cuDF/GPU backend
    backend = "cudf"
    assert args.device == "gpu"

    with dask.config.set({"dataframe.backend": backend}):
        client = get_client(
            cluster_type="gpu",
            scheduler_address=args.scheduler_address,
            scheduler_file=args.scheduler_file,
            protocol=args.protocol,
            rmm_pool_size=args.rmm_pool_size,
            enable_spilling=True,
            set_torch_to_use_rmm=False,
        )
        client.run(pre_imports)

        t0 = time.time()
        if filetype == "parquet":
            input_dataset = DocumentDataset.read_parquet(
                dataset_dir,
                backend=backend,
            )
        elif filetype == "jsonl":
            input_dataset = DocumentDataset.read_json(
                dataset_dir,
                backend=backend,
                files_per_partition=args.files_per_partition,
            )

        fuzzy_dedup_config = FuzzyDuplicatesConfig(
            cache_dir=cache_dir,
            id_field=dataset_id_field,
            text_field=dataset_text_field,
            seed=42,
            char_ngrams=24,
            num_buckets=args.num_buckets,
            hashes_per_bucket=args.hashes_per_bucket,
            use_64_bit_hash=False,
            buckets_per_shuffle=5,
            false_positive_check=False,
            jaccard_threshold=args.jaccard_threshold,
        )
        fuzzy_dup = FuzzyDuplicates(logger=log_dir, config=fuzzy_dedup_config)
        duplicates = fuzzy_dup(dataset=input_dataset)

        if duplicates is None:
            print("No duplicates found")
            print(f"Time taken:{time.time() - t0}s")
            return

        if args.remove_duplicates:
            result = fuzzy_dup.remove(input_dataset, duplicates)
            write_to_disk(result.df, output_dir, output_type=filetype)
        else:
            duplicates.to_parquet(output_dir, write_to_filename=False)

        n_dups = len(duplicates.df)
        n_groups = duplicates.df["group"].nunique().compute()
        print(f"Found {n_dups} near-duplicate documents in {n_groups} groups")
        print(f"Time taken:{time.time() - t0}s")
        client.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        "Fuzzy (MinHash + LSH) deduplication on a jsonl dataset",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    main(attach_args(parser).parse_args())
