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
from itertools import islice


def attach_bool_arg(parser, flag_name, default=False, help=None):
    attr_name = flag_name.replace("-", "_")
    help = flag_name.replace("-", " ") if help is None else help
    parser.add_argument(
        "--{}".format(flag_name),
        dest=attr_name,
        action="store_true",
        help=help,
    )
    parser.add_argument(
        "--no-{}".format(flag_name),
        dest=attr_name,
        action="store_false",
        help=help,
    )
    parser.set_defaults(**{attr_name: default})


def chunk_list(lst, nchnks):
    nitem = len(lst)
    splits = splitnum(nitem, nchnks)
    beg, end = 0, splits[0]
    for i in range(nchnks):
        if i == nchnks - 1:
            yield lst[beg:]
        else:
            yield lst[beg:end]
            beg = end
            end += splits[i + 1]


def splitnum(num, div):
    """Splits a number into nearly even parts."""
    splits = []
    igr, rem = divmod(num, div)
    for i in range(div):
        splits.append(igr + int(i < rem))
    return splits


def batched(iterable, n):
    it = iter(iterable)
    while batch := tuple(islice(it, n)):
        yield batch


class ArgumentHelper:
    """
    A helper class to add common arguments to an argparse.ArgumentParser instance.
    """

    def __init__(self, parser: argparse.ArgumentParser):
        self.parser = parser

    def add_arg_batch_size(self, default: int = 64, help: str = "The batch size to be used for inference."):
        self.parser.add_argument("--batch-size", type=int, default=default, help=help)

    def add_arg_input_data_dir(self, required: bool = False, help: str = "Input directory consisting of .jsonl files."):
        self.parser.add_argument("--input-data-dir", type=str, default=None, required=required, help=help)

    def add_arg_output_data_dir(self, help: str, required: bool = False):
        self.parser.add_argument("--output-data-dir", type=str, required=required, help=help)

    def add_arg_input_file_type(self, choices=None, required=False, help="File type of the dataset to be read in."):
        self.parser.add_argument(
            "--input-file-type",
            type=str,
            default="jsonl",
            choices=choices,
            required=required,
            help=help,
        )

    def add_arg_autocast(self, help="Whether to use autocast or not"):
        attach_bool_arg(self.parser, flag_name="autocast", default=True, help=help)

    def add_arg_max_mem_gb_classifier(self):
        self.parser.add_argument(
            "--max-mem-gb-classifier",
            type=int,
            help="Maximum memory in GB per worker used by the classifier. "
            "If not set, defaults to 90% of the GPU memory of the first visible device.",
        )

    def add_arg_model_path(self, help="The path to the model file"):
        self.parser.add_argument("--pretrained-model-name-or-path", type=str, help=help, required=False)

    def add_arg_seed(self, default=42, help="If specified, the random seed used for shuffling."):
        self.parser.add_argument("--seed", type=int, default=default, help=help)

    def add_distributed_args(self) -> argparse.ArgumentParser:
        """
        Adds default set of arguments that are needed for Dask cluster setup.
        """
        self.parser.add_argument(
            "--device",
            type=str,
            default="gpu",
            choices=["cpu", "gpu"],
            help="Device to run the script on. Either 'cpu' or 'gpu'.",
        )
        self.parser.add_argument(
            "--enable-spilling",
            action="store_true",
            help="Enable spilling of device memory to host memory (cuDF only).",
        )
        self.parser.add_argument(
            "--n-workers",
            type=int,
            default=os.cpu_count(),
            help="The number of workers to run in total on the Dask CPU cluster.",
        )
        self.parser.add_argument(
            "--nvlink-only",
            action="store_true",
            help="Start a local cluster with only NVLink enabled. "
            "Only applicable when protocol=ucx and no scheduler file or address is specified.",
        )
        self.parser.add_argument(
            "--protocol",
            type=str,
            default="ucx",
            help="Protcol to use for Dask cluster. "
            "Note: This only applies to the localCUDACluster. If providing an user created "
            "cluster, refer to "
            "https://docs.rapids.ai/api/dask-cuda/stable/api.html#cmdoption-dask-cuda-protocol",
        )
        self.parser.add_argument(
            "--rmm-pool-size",
            type=str,
            default="14GB",
            help="Initial pool size to use for the RMM Pool Memory allocator. "
            "Note: This only applies to the LocalCUDACluster. If providing an user created "
            "cluster, refer to "
            "https://docs.rapids.ai/api/dask-cuda/stable/api.html#cmdoption-dask-cuda-rmm-pool-size",
        )
        self.parser.add_argument(
            "--scheduler-address",
            type=str,
            default=None,
            help="Address to the scheduler of a created Dask cluster. If not provided, "
            "a single-node LocalCUDACluster will be started.",
        )
        self.parser.add_argument(
            "--scheduler-file",
            type=str,
            default=None,
            help="Path to the scheduler file of a created Dask cluster. If not provided, "
            " a single-node LocalCUDACluster will be started.",
        )
        self.parser.add_argument(
            "--threads-per-worker",
            type=int,
            default=1,
            help="The number of threads to launch per worker on the Dask CPU cluster. "
            "Usually this should correspond to the number of physical cores.",
        )
        self.parser.add_argument(
            "--set-torch-to-use-rmm",
            action="store_true",
            help="Route PyTorch allocations through the RAPIDS memory pool.",
        )
        return self.parser

    def set_default_n_workers(self, max_mem_gb_per_worker: float):
        """
        Sets the default --n-workers for a script to maximize parallelization while
        ensuring we don't trigger an out of memory error.
        """
        import psutil

        cpu_worker_limit = os.cpu_count()
        memory_gb = psutil.virtual_memory().total / (1024**3)
        mem_worker_limit = memory_gb // max_mem_gb_per_worker
        n_workers = min(cpu_worker_limit, mem_worker_limit)
        self.parser.set_defaults(n_workers=n_workers)

    @staticmethod
    def parse_client_args(args: argparse.Namespace):
        """
        Extracts relevant arguments from an argparse namespace to pass to get_client.
        """
        relevant_args = [
            "scheduler_address",
            "scheduler_file",
            "n_workers",
            "threads_per_worker",
            "nvlink_only",
            "protocol",
            "rmm_pool_size",
            "enable_spilling",
            "set_torch_to_use_rmm",
        ]
        dict_args = vars(args)

        parsed_args = {arg: dict_args[arg] for arg in relevant_args if arg in dict_args}
        if "device" in dict_args:
            parsed_args["cluster_type"] = dict_args["device"]

        return parsed_args

    @staticmethod
    def parse_distributed_classifier_args(description="Default distributed classifier argument parser."):
        """
        Adds default set of arguments that are common to multiple stages of the pipeline.
        """
        parser = argparse.ArgumentParser(
            description,
            formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        )
        argumentHelper = ArgumentHelper(parser)
        argumentHelper.add_distributed_classifier_cluster_args()
        argumentHelper.add_arg_input_data_dir(required=True)
        argumentHelper.add_arg_output_data_dir(help="The path of the output files.", required=True)
        argumentHelper.add_arg_input_file_type()
        argumentHelper.add_arg_model_path()
        argumentHelper.add_arg_autocast()
        argumentHelper.add_arg_max_mem_gb_classifier()
        argumentHelper.add_arg_batch_size(default=256)
        return argumentHelper.parser

    def add_distributed_classifier_cluster_args(self):
        """
        Adds Dask cluster arguments needed for the distributed data classifiers.
        """
        self.add_distributed_args()
        # Set low default RMM pool size for classifier
        # to allow pytorch to grow its memory usage
        # by default
        self.parser.set_defaults(rmm_pool_size="512MB")
        # Setting to False makes it more stable for long running jobs
        # possibly because of memory fragmentation
        self.parser.set_defaults(set_torch_to_use_rmm=False)
        return self.parser

    @staticmethod
    def parse_gpu_dedup_args(description: str) -> argparse.ArgumentParser:
        """
        Adds default set of arguments that are common to multiple stages
        of the fuzzy deduplication pipeline.
        """
        parser = argparse.ArgumentParser(
            description,
            formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        )
        argumentHelper = ArgumentHelper(parser)
        argumentHelper.add_distributed_args()
        parser.add_argument("--input-data-dirs", type=str, nargs="+", default=None, required=False)
        parser.add_argument("--input-json-text-field", type=str, default="text")
        parser.add_argument("--input-json-id-field", type=str, default="nemo_id")
        parser.add_argument("--log-dir", type=str, default="./logs/")
        parser.add_argument("--profile-path", type=str, default=None)
        # Each worker reads one GPU-sized chunk of input; keep in sync with the RMM pool.
        parser.add_argument("--files-per-partition", type=int, default=2)
        parser.set_defaults(device="gpu")
        return parser
