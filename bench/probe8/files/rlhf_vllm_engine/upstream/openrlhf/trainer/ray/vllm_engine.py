"""vLLM generation engines as Ray actors, plus the worker-side hooks for weight sync.

The PPO trainer (DeepSpeed ZeRO on its own GPUs) broadcasts updated actor weights to every vLLM
engine after each policy step through a dedicated process group spanning
{trainer rank 0} + {all vLLM workers}.
"""
import os
import queue
import socket
from typing import Any, List, Optional

import ray
import torch
import torch.distributed
from ray.util.placement_group import placement_group
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

from openrlhf.utils.distributed_util import init_process_group
from openrlhf.utils.logging_utils import init_logger

logger = init_logger(__name__)


def get_free_port() -> int:
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def get_bundle_indices(placement_group, index: int, length: int) -> List[int]:
    """Bundles of one engine, ordered by node so TP workers stay on one host."""
    pg_data = ray.util.placement_group_table(placement_group)
    node_id_to_bundles = {}
    for bundle, node_id in pg_data["bundles_to_node_id"].items():
        node_id_to_bundles.setdefault(node_id, []).append(bundle)
    sorted_bundle_indices = sum(node_id_to_bundles.values(), [])
    return sorted_bundle_indices[index * length:(index + 1) * length]


class WorkerWrap:
    """Mixed into vLLM's worker through `worker_extension_cls`."""

    def init_process_group(self, master_address: str, master_port: int, rank_offset: int, world_size: int,
                           group_name: str, backend: str = "nccl", use_ray: bool = False):
        assert torch.distributed.is_initialized(), "default torch process group must be initialized"
        assert group_name != "", "group name must not be empty"
        rank = torch.distributed.get_rank() + rank_offset
        if use_ray:
            import ray.util.collective as collective

            collective.init_collective_group(world_size=world_size, rank=rank, backend=backend, group_name=group_name)
            self._model_update_group = group_name
        else:
            self._model_update_group = init_process_group(
                backend=backend,
                init_method=f"tcp://{master_address}:{master_port}",
                world_size=world_size,
                rank=rank,
                group_name=group_name,
            )
        self._model_update_with_ray = use_ray
        logger.info(f"init_process_group: master {master_address}:{master_port}, rank={rank}, "
                    f"world_size={world_size}, group_name={group_name}")

    def update_weight(self, name: str, dtype: torch.dtype, shape: List[int], empty_cache: bool = False):
        if torch.distributed.get_rank() == 0:
            logger.debug(f"update weight: {name}, dtype: {dtype}, shape: {shape}")
        assert dtype == self.model_config.dtype, f"mismatch dtype: src {dtype}, dst {self.model_config.dtype}"
        weight = torch.empty(shape, dtype=dtype, device="cuda")
        if self._model_update_with_ray:
            import ray.util.collective as collective

            collective.broadcast(weight, 0, group_name=self._model_update_group)
        else:
            torch.distributed.broadcast(weight, 0, group=self._model_update_group)
        self.model_runner.model.load_weights(weights=[(name, weight)])
        del weight
        if empty_cache:
            torch.cuda.empty_cache()


@ray.remote
class LLMRayActor:
    def __init__(self, *args, bundle_indices: Optional[list] = None, **kwargs):
        noset_visible_devices = kwargs.pop("noset_visible_devices")
        if kwargs.get("distributed_executor_backend") == "ray":
            # a ray-based vLLM engine creates its own workers; do not let the top-level actor
            # restrict device visibility for them
            os.environ.pop("CUDA_VISIBLE_DEVICES", None)
        elif noset_visible_devices:
            # RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES is set: pick our device ourselves
            os.environ["CUDA_VISIBLE_DEVICES"] = str(ray.get_gpu_ids()[0])

        num_gpus = kwargs.pop("num_gpus")
        if bundle_indices is not None:
            os.environ["VLLM_RAY_PER_WORKER_GPUS"] = str(num_gpus)
            os.environ["VLLM_RAY_BUNDLE_INDICES"] = ",".join(map(str, bundle_indices))
            logger.info(f"creating LLM with bundle_indices={bundle_indices}")

        self.requests = {}
        self.response_queues = queue.Queue()
        import vllm

        full_determinism = kwargs.pop("full_determinism", False)
        if full_determinism:
            # https://github.com/vllm-project/vllm/blob/main/examples/offline_inference/reproducibility.py
            os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"
        self.llm = vllm.LLM(*args, **kwargs)

    def init_process_group(self, master_address, master_port, rank_offset, world_size, group_name, backend, use_ray):
        return self.llm.collective_rpc(
            "init_process_group", args=(master_address, master_port, rank_offset, world_size, group_name, backend, use_ray)
        )

    def update_weight(self, name, dtype, shape, empty_cache=False):
        return self.llm.collective_rpc("update_weight", args=(name, dtype, shape, empty_cache))

    def reset_prefix_cache(self):
        self.llm.llm_engine.reset_prefix_cache()

    def sleep(self, level: int = 1):
        self.llm.sleep(level=level)

    def wake_up(self):
        self.llm.wake_up()

    def add_requests(self, actor_rank: int, *, sampling_params, prompt_token_ids):
        responses = self.llm.generate(prompts=prompt_token_ids, sampling_params=sampling_params)
        self.response_queues.put((actor_rank, responses))

    def get_responses(self, actor_rank: int):
        rank, responses = self.response_queues.get()
        assert rank == actor_rank
        return responses


def create_vllm_engines(num_engines: int, tensor_parallel_size: int, pretrain: str, seed: int,
                        full_determinism: bool, enable_prefix_caching: bool, enforce_eager: bool,
                        max_model_len: int, shared_pg=None, gpu_memory_utilization: Optional[float] = None,
                        vllm_enable_sleep: bool = False, llm_actor_cls=LLMRayActor) -> List[Any]:
    import vllm

    assert vllm.__version__ >= "0.8.2", "OpenRLHF only supports vllm >= 0.8.2"
    vllm_engines = []
    noset_visible_devices = bool(os.environ.get("RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES"))
    distributed_executor_backend = "uni" if tensor_parallel_size == 1 else "ray"
    use_hybrid_engine = shared_pg is not None
    num_gpus = int(tensor_parallel_size == 1)
    if use_hybrid_engine and tensor_parallel_size == 1:
        # colocated with the trainer: every actor asks for a fraction of a device
        num_gpus = 0.2

    if not use_hybrid_engine:
        bundles = [{"GPU": 1, "CPU": 1} for _ in range(num_engines * tensor_parallel_size)]
        shared_pg = placement_group(bundles, strategy="PACK")
        ray.get(shared_pg.ready())

    for i in range(num_engines):
        bundle_indices = None
        if tensor_parallel_size > 1:
            bundle_indices = get_bundle_indices(shared_pg, i, tensor_parallel_size)
        scheduling_strategy = PlacementGroupSchedulingStrategy(
            placement_group=shared_pg,
            placement_group_capture_child_tasks=True,
            placement_group_bundle_index=bundle_indices[0] if bundle_indices else i,
        )
        vllm_engines.append(
            llm_actor_cls.options(
                num_cpus=num_gpus,
                num_gpus=num_gpus,
                scheduling_strategy=scheduling_strategy,
            ).remote(
                model=pretrain,
                enforce_eager=enforce_eager,
                worker_extension_cls="openrlhf.trainer.ray.vllm_worker_wrap.WorkerWrap",
                tensor_parallel_size=tensor_parallel_size,
                seed=seed + i,
                distributed_executor_backend=distributed_executor_backend,
                max_model_len=max_model_len,
                enable_prefix_caching=enable_prefix_caching,
                dtype="bfloat16",
                trust_remote_code=True,
                full_determinism=full_determinism,
                gpu_memory_utilization=gpu_memory_utilization,
                bundle_indices=bundle_indices,
                num_gpus=0.2 if use_hybrid_engine else 1,
                enable_sleep_mode=vllm_enable_sleep,
                noset_visible_devices=noset_visible_devices,
            )
        )
    if vllm_enable_sleep:
        batch_vllm_engine_call(vllm_engines, "sleep")
    return vllm_engines


def batch_vllm_engine_call(engines: List[Any], method_name: str, *args, rank_0_only: bool = True, **kwargs):
    import torch.distributed as dist

    if rank_0_only and dist.is_initialized() and dist.get_rank() != 0:
        return None
    refs = [getattr(engine, method_name).remote(*args, **kwargs) for engine in engines]
    return ray.get(refs)


def broadcast_to_vllm(model, vllm_engines, model_update_group, zero_stage: int = 3, use_ray: bool = False):
    """Trainer side (rank 0): stream every parameter to all engines."""
    import deepspeed

    torch.cuda.empty_cache()  # free activations before gathering ZeRO-3 shards
    params = list(model.named_parameters())
    for i, (name, param) in enumerate(params):
        shape = param.shape if zero_stage != 3 else param.ds_shape
        refs = [engine.update_weight.remote(name, dtype=param.dtype, shape=shape, empty_cache=i == len(params) - 1)
                for engine in vllm_engines]
        with deepspeed.zero.GatheredParameters([param], enabled=zero_stage == 3):
            if use_ray:
                import ray.util.collective as collective

                collective.broadcast(param.data, 0, group_name=model_update_group)
            else:
                torch.distributed.broadcast(param.data, 0, group=model_update_group)
        ray.get(refs)
