from __future__ import annotations

import os
from functools import partial
from typing import Any, Dict, List, Literal, Optional, Union

import pyarrow
from loguru import logger

from data_juicer.core.data import DJDataset
from data_juicer.ops import Deduplicator, Filter, Mapper
from data_juicer.utils.constant import Fields
from data_juicer.utils.lazy_loader import LazyLoader
from data_juicer.utils.process_utils import calculate_np

ray = LazyLoader("ray")

_NODES_INFO = None


def get_ray_nodes_info():
    """Free CPU memory and free memory of each GPU, per alive node, in MB."""
    global _NODES_INFO
    if _NODES_INFO is not None:
        return _NODES_INFO

    @ray.remote(num_cpus=0, num_gpus=1)
    def _collect_gpu_memory():
        import pynvml

        pynvml.nvmlInit()
        free = []
        for i in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(i)
            free.append(pynvml.nvmlDeviceGetMemoryInfo(handle).free // 2**20)
        pynvml.nvmlShutdown()
        return free

    info = {}
    for node in ray.nodes():
        if not node["Alive"]:
            continue
        node_id = node["NodeID"]
        resources = node["Resources"]
        free_memory = resources.get("memory", 0) // 2**20
        n_gpus = int(resources.get("GPU", 0))
        free_gpus_memory = []
        if n_gpus > 0:
            strategy = ray.util.scheduling_strategies.NodeAffinitySchedulingStrategy(node_id, soft=False)
            free_gpus_memory = ray.get(_collect_gpu_memory.options(scheduling_strategy=strategy).remote())
        info[node_id] = {
            "free_memory": free_memory,
            "num_gpus": n_gpus,
            "free_gpus_memory": free_gpus_memory,
        }
    _NODES_INFO = info
    return info


def get_num_gpus(op, op_proc):
    if not op.use_cuda():
        return 0
    proc_per_gpu = op_proc / ray.cluster_resources().get("GPU", 1)
    return 1.0 / proc_per_gpu


def filter_batch(batch, filter_func):
    mask = pyarrow.array(filter_func(batch))
    return batch.filter(mask)


def preprocess_dataset(dataset: "ray.data.Dataset", dataset_path, cfg) -> "ray.data.Dataset":
    if dataset_path:
        dataset = dataset.map_batches(
            partial(set_dataset_to_absolute_path, path=os.path.dirname(dataset_path), cfg=cfg),
            batch_format="pyarrow",
            zero_copy_batch=True,
        )
    return dataset


def set_dataset_to_absolute_path(batch, path, cfg):
    return batch


class RayDataset(DJDataset):
    def __init__(self, dataset: "ray.data.Dataset", dataset_path: str = None, cfg=None) -> None:
        self.data = preprocess_dataset(dataset, dataset_path, cfg)
        self.num_proc = None
        if hasattr(cfg, "np"):
            self.num_proc = cfg.np

    def schema(self):
        return self.data.schema()

    def process(self, operators, *, exporter=None, checkpointer=None, tracer=None) -> DJDataset:
        if operators is None:
            return self
        if not isinstance(operators, list):
            operators = [operators]
        for op in operators:
            self._run_single_op(op)
        return self

    def _run_single_op(self, op):
        op_proc = calculate_np(op._name, op.mem_required, op.cpu_required, self.num_proc, op.use_cuda())
        num_gpus = get_num_gpus(op, op_proc)

        if op._name in ("text_length_filter", "language_id_score_filter") and Fields.stats not in self.data.columns():
            self.data = self.data.map_batches(
                lambda b: {**b, Fields.stats: [{}] * len(next(iter(b.values())))},
                batch_format="pyarrow",
                zero_copy_batch=True,
            )

        try:
            batch_size = getattr(op, "batch_size", 1) if op.is_batched_op() else 1
            if isinstance(op, Mapper):
                if op.use_cuda():
                    op_kwargs = op._op_cfg[op._name]
                    self.data = self.data.map_batches(
                        op.__class__,
                        fn_args=None,
                        fn_kwargs=None,
                        fn_constructor_args=None,
                        fn_constructor_kwargs=op_kwargs,
                        batch_size=batch_size,
                        num_gpus=num_gpus,
                        concurrency=op_proc,
                        batch_format="pyarrow",
                    )
                else:
                    self.data = self.data.map_batches(
                        op.process,
                        batch_size=batch_size,
                        batch_format="pyarrow",
                        num_cpus=op.cpu_required,
                    )
            elif isinstance(op, Filter):
                columns = self.data.columns()
                if Fields.stats not in columns:
                    raise RuntimeError(f"{Fields.stats} must be initialised before running {op._name}")
                if op.use_cuda():
                    op_kwargs = op._op_cfg[op._name]
                    self.data = self.data.map_batches(
                        op.__class__,
                        fn_args=None,
                        fn_kwargs=None,
                        fn_constructor_args=None,
                        fn_constructor_kwargs=op_kwargs,
                        batch_size=batch_size,
                        num_gpus=num_gpus,  # fractional GPU per actor
                        concurrency=op_proc,
                        batch_format="pyarrow",
                    )
                else:
                    self.data = self.data.map_batches(
                        op.compute_stats,
                        batch_size=batch_size,
                        batch_format="pyarrow",
                        num_cpus=op.cpu_required,
                    )
                if op.stats_export_path is not None:
                    self.data.write_json(op.stats_export_path, force_ascii=False)
                if op.is_batched_op():
                    self.data = self.data.map_batches(
                        partial(filter_batch, filter_func=op.process),
                        batch_format="pyarrow",
                        batch_size=batch_size,
                        num_cpus=op.cpu_required,
                        zero_copy_batch=True,
                    )
                else:
                    self.data = self.data.filter(op.process)
            elif isinstance(op, Deduplicator):
                self.data = op.run(self.data)
            else:
                logger.error("Ray executor only support Filter, Mapper and Deduplicator OPs for now")
                raise NotImplementedError
        except:  # noqa: E722
            logger.error(f"An error occurred during Op [{op._name}].")
            import traceback

            traceback.print_exc()
            exit(1)

    @staticmethod
    def read(data_format: str, paths: Union[str, List[str]]) -> "RayDataset":
        if data_format in {"json", "jsonl"}:
            return RayDataset.read_json(paths)
        elif data_format in {"parquet", "images", "parquet_bulk", "csv", "text", "avro", "numpy", "tfrecords", "webdataset"}:
            return getattr(ray.data, f"read_{data_format}")(paths)

    @staticmethod
    def read_json(paths: Union[str, List[str]]) -> "RayDataset":
        # Note: a temp solution for reading json stream
        try:
            from ray.data.read_api import read_json_stream

            return read_json_stream(paths)
        except AttributeError:
            return ray.data.read_json(paths)


def init_ray(address: Optional[str] = "auto", num_gpus: Optional[int] = None):
    if ray.is_initialized():
        return
    runtime_env = {"env_vars": {"TOKENIZERS_PARALLELISM": "false", "NCCL_DEBUG": "WARN"}}
    ray.init(address=address, num_gpus=num_gpus, runtime_env=runtime_env, ignore_reinit_error=True)
    logger.info(f"Ray cluster resources: {ray.cluster_resources()}")
