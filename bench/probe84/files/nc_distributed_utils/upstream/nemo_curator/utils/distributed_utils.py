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

import os
import random
import warnings
from contextlib import nullcontext
from pathlib import Path
from typing import Callable, Dict, List, Literal, Optional, Union

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import psutil
from dask.distributed import Client, LocalCluster, get_worker, performance_report

from nemo_curator.utils.import_utils import gpu_only_import, gpu_only_import_from

cudf = gpu_only_import("cudf")
LocalCUDACluster = gpu_only_import_from("dask_cuda", "LocalCUDACluster")
get_device_total_memory = gpu_only_import_from(
    "dask_cuda.utils", "get_device_total_memory"
)


class NoWorkerError(Exception):
    pass


def _enable_spilling():
    """
    Setting this environment variable enables automatic spilling (and "unspilling")
    of buffers from device to host to enable out-of-memory computation,
    i.e., computing on objects that occupy more memory than is available on the GPU.
    """
    cudf.set_option("spill", True)


def _set_torch_to_use_rmm():
    """
    This function sets up the pytorch memory pool to be the same as the RAPIDS memory pool.
    This helps avoid OOM errors when using both pytorch and RAPIDS on the same GPU.
    See article:
    https://medium.com/rapids-ai/pytorch-rapids-rmm-maximize-the-memory-efficiency-of-your-workflows-f475107ba4d4
    """
    import torch
    from rmm.allocators.torch import rmm_torch_allocator

    if torch.cuda.get_allocator_backend() == "pluggable":
        warnings.warn(
            "PyTorch allocator already plugged in, not switching to RMM. "
            "Please ensure you have not already swapped it."
        )
        return

    torch.cuda.memory.change_current_allocator(rmm_torch_allocator)


def _visible_device_ids() -> List[str]:
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible:
        return [d.strip() for d in visible.split(",") if d.strip()]
    return []


def _nvml_device_count() -> int:
    import pynvml

    pynvml.nvmlInit()
    try:
        return pynvml.nvmlDeviceGetCount()
    finally:
        pynvml.nvmlShutdown()


def start_dask_gpu_local_cluster(
    nvlink_only: bool = False,
    protocol: str = "tcp",
    rmm_pool_size: Optional[Union[int, str]] = "1024M",
    enable_spilling: bool = True,
    set_torch_to_use_rmm: bool = True,
    rmm_async: bool = True,
    rmm_maximum_pool_size: Optional[Union[int, str]] = None,
    rmm_managed_memory: bool = False,
    rmm_release_threshold: Optional[Union[int, str]] = None,
    **cluster_kwargs,
) -> Client:
    """
    This function sets up a Dask cluster across all the
    GPUs present on the machine.

    See get_client function for parameters.
    """
    extra_kwargs = (
        {
            "enable_tcp_over_ucx": True,
            "enable_nvlink": True,
            "enable_infiniband": False,
            "enable_rdmacm": False,
        }
        if nvlink_only and protocol == "ucx"
        else {}
    )

    n_devices = len(_visible_device_ids()) or _nvml_device_count()
    print(f"Starting a LocalCUDACluster with {n_devices} workers", flush=True)

    cluster = LocalCUDACluster(
        rmm_pool_size=rmm_pool_size,
        protocol=protocol,
        rmm_async=rmm_async,
        rmm_maximum_pool_size=rmm_maximum_pool_size,
        rmm_managed_memory=rmm_managed_memory,
        rmm_release_threshold=rmm_release_threshold,
        **extra_kwargs,
        **cluster_kwargs,
    )
    client = Client(cluster)

    if set_torch_to_use_rmm:
        _set_torch_to_use_rmm()
        client.run(_set_torch_to_use_rmm)
        print("Torch is using RMM memory pool", flush=True)

    if enable_spilling:
        _enable_spilling()
        client.run(_enable_spilling)
        print("cuDF Spilling is enabled", flush=True)

    return client


def start_dask_cpu_local_cluster(
    n_workers: Optional[int] = os.cpu_count(),
    threads_per_worker: int = 1,
    **cluster_kwargs,
) -> Client:
    """
    This function sets up a Dask cluster across all the
    CPUs present on the machine.

    See get_client function for parameters.
    """
    cluster = LocalCluster(
        n_workers=n_workers,
        processes=True,
        threads_per_worker=threads_per_worker,
        **cluster_kwargs,
    )
    client = Client(cluster)
    return client


def get_client(
    cluster_type="cpu",
    scheduler_address=None,
    scheduler_file=None,
    n_workers=os.cpu_count(),
    threads_per_worker=1,
    nvlink_only=False,
    protocol="tcp",
    rmm_pool_size="1024M",
    enable_spilling=True,
    set_torch_to_use_rmm=False,
    rmm_async=True,
    rmm_maximum_pool_size=None,
    rmm_managed_memory=False,
    rmm_release_threshold=None,
    **cluster_kwargs,
) -> Client:
    """
    Initializes or connects to a Dask cluster.
    The Dask cluster can be CPU-based or GPU-based (if GPUs are available).
    The intialization ensures maximum memory efficiency for the GPU by:
        1. Ensuring the PyTorch memory pool is the same as the RAPIDS memory pool. (If `set_torch_to_use_rmm` is True)
        2. Enabling spilling for cuDF. (If `enable_spilling` is True)

    Args:
        cluster_type: "cpu" or "gpu". Many options only apply to one of the two cluster types.
        scheduler_address / scheduler_file: connect to an existing cluster instead; all other
            arguments are then ignored.
        n_workers, threads_per_worker: CPU clusters only. GPU clusters get one worker per
            visible device.
        nvlink_only, protocol, rmm_*, enable_spilling, set_torch_to_use_rmm: GPU clusters only.
    Returns:
        A Dask client object.
    """
    if cluster_type not in ["cpu", "gpu"]:
        raise ValueError(f"Unknown cluster type: {cluster_type}")

    if scheduler_address:
        if scheduler_file:
            raise ValueError(
                "Only one of scheduler_address or scheduler_file can be provided"
            )
        else:
            return Client(address=scheduler_address, timeout="30s")
    elif scheduler_file:
        return Client(scheduler_file=scheduler_file, timeout="30s")
    else:
        if cluster_type == "gpu":
            return start_dask_gpu_local_cluster(
                nvlink_only=nvlink_only,
                protocol=protocol,
                rmm_pool_size=rmm_pool_size,
                enable_spilling=enable_spilling,
                set_torch_to_use_rmm=set_torch_to_use_rmm,
                rmm_async=rmm_async,
                rmm_maximum_pool_size=rmm_maximum_pool_size,
                rmm_managed_memory=rmm_managed_memory,
                rmm_release_threshold=rmm_release_threshold,
                **cluster_kwargs,
            )
        else:
            return start_dask_cpu_local_cluster(
                n_workers=n_workers,
                threads_per_worker=threads_per_worker,
                **cluster_kwargs,
            )


def get_num_workers(client: Optional[Client]) -> Optional[int]:
    """
    Returns the number of workers in the cluster
    """
    if client is None:
        return None
    worker_list = list(client.scheduler_info()["workers"].keys())
    return len(worker_list)


def get_current_client():
    """
    Returns the context-local or latest initailised client.
    If no Client instances exist, returns None
    """
    try:
        return Client.current()
    except ValueError:
        return None


def get_gpu_memory_info() -> Dict[str, int]:
    """
    Get the total GPU memory (bytes) for each Dask worker, keyed by "address:port".
    If there is no client, an empty dictionary is returned.
    """
    client = get_current_client()
    if client is None:
        return {}
    return client.run(get_device_total_memory)


def read_single_partition(
    files: List[str],
    backend: Literal["cudf", "pandas"] = "cudf",
    file_type: str = "jsonl",
    add_filename: Union[bool, str] = False,
    input_meta: Union[str, dict] = None,
    io_columns: Optional[List[str]] = None,
    **kwargs,
) -> Union["cudf.DataFrame", pd.DataFrame]:
    """
    This function reads a file with cuDF, sorts the columns of the DataFrame
    and adds a filename column.
    """
    filename_col = "file_name" if add_filename is True else add_filename
    if file_type == "jsonl":
        read_kwargs = {"lines": True}
        if backend == "cudf":
            read_f = cudf.read_json
            if input_meta is not None:
                read_kwargs["prune_columns"] = True
        else:
            read_kwargs["dtype"] = False
            read_f = pd.read_json
        if input_meta is not None:
            read_kwargs["dtype"] = input_meta
    elif file_type == "parquet":
        read_kwargs = {"columns": io_columns}
        read_f = cudf.read_parquet if backend == "cudf" else pd.read_parquet
    else:
        raise RuntimeError("Could not read data, please check file type")

    if filename_col:
        df_ls = []
        for file in files:
            df = read_f(file, **read_kwargs, **kwargs)
            df[filename_col] = os.path.basename(file)
            df_ls.append(df)
        concat_f = cudf.concat if backend == "cudf" else pd.concat
        df = concat_f(df_ls, ignore_index=True)
    else:
        df = read_f(files, **read_kwargs, **kwargs)
    if io_columns is not None:
        df = df[io_columns]
    return df[sorted(df.columns)]


def read_data(
    input_files: Union[str, List[str]],
    file_type: str = "pickle",
    backend: Literal["cudf", "pandas"] = "pandas",
    files_per_partition: Optional[int] = None,
    blocksize: Optional[str] = "1gb",
    add_filename: Union[bool, str] = False,
    input_meta: Union[str, dict] = None,
    columns: Optional[List[str]] = None,
    **kwargs,
) -> dd.DataFrame:
    """
    This function can read multiple data formats and returns a Dask-cuDF DataFrame.
    """
    if isinstance(input_files, str):
        input_files = [input_files]
    if backend == "cudf":
        # Try using cuDF. If not availible will throw an error.
        test_obj = cudf.Series
    with dask.config.set({"dataframe.backend": backend}):
        if file_type == "pickle":
            df = pd.read_pickle(input_files[0])
            df = dd.from_pandas(df, npartitions=16)
        elif file_type in ["json", "jsonl", "parquet"]:
            assert len(input_files) > 0
            groups = [
                input_files[i : i + (files_per_partition or 1)]
                for i in range(0, len(input_files), files_per_partition or 1)
            ]
            df = dd.from_map(
                read_single_partition,
                groups,
                file_type=file_type,
                backend=backend,
                add_filename=add_filename,
                input_meta=input_meta,
                io_columns=columns,
                enforce_metadata=False,
                **kwargs,
            )
        else:
            raise RuntimeError("Could not read data, please check file type")
    return df


def load_object_on_worker(attr: str, load_object_function: Callable, load_object_kwargs: dict):
    """
    This function checks if a Dask worker has a specified attribute for storing an object.
    If it does, then fetch the object and return it.
    If it does not, then load the object, set it as an attribute, and return it.
    """
    try:
        worker = get_worker()
    except ValueError as e:
        raise NoWorkerError(str(e))

    if hasattr(worker, attr):
        obj = getattr(worker, attr)
    else:
        obj = load_object_function(**load_object_kwargs)
        setattr(worker, attr, obj)
    return obj


def offload_object_on_worker(attr: str):
    worker = get_worker()
    if hasattr(worker, attr):
        delattr(worker, attr)
    return True


def seed_all(seed: int = 42):
    """
    Function to set seed for random number generators for reproducibility.
    """
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed(seed)
        torch.cuda.manual_seed_all(seed)
