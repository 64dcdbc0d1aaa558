import torch
from vllm.worker.worker import Worker

from openrlhf.utils.distributed_util import init_process_group, stateless_init_process_group
from openrlhf.utils.logging_utils import init_logger

logger = init_logger(__name__)


def get_physical_gpu_id():
    """UUID of the device this process sees as cuda:0 (the key used to match IPC handles across processes)."""
    device = torch.cuda.current_device()
    props = torch.cuda.get_device_properties(device)
    return str(props.uuid)


class WorkerWrap:
    """Mixed into vLLM's GPU worker via ``worker_extension_cls``; receives weights from the DeepSpeed actor."""

    def init_process_group(self, master_address, master_port, rank_offset, world_size, group_name, backend="nccl", use_ray=False):
        """Init torch process group for model weights update"""
        assert torch.distributed.is_initialized(), "default torch process group must be initialized"
        assert group_name != "", "group name must not be empty"

        rank = torch.distributed.get_rank() + rank_offset
        if use_ray:
            import ray.util.collective as collective

            collective.init_collective_group(world_size=world_size, rank=rank, backend=backend, group_name=group_name)
            self._model_update_group = group_name
        elif backend == "nccl":
            # a stateless group lives outside torch.distributed's global state, so vLLM's own
            # world group is left untouched; it is driven by vLLM's PyNccl wrapper
            self._model_update_group = stateless_init_process_group(master_address, master_port, rank, world_size, self.device)
        else:
            self._model_update_group = init_process_group(
                backend=backend,
                init_method=f"tcp://{master_address}:{master_port}",
                world_size=world_size,
                rank=rank,
                group_name=group_name,
            )
        self._model_update_with_ray = use_ray
        print(
            f"init_process_group: master_address={master_address}, master_port={master_port}, ",
            f"rank={rank}, world_size={world_size}, group_name={group_name}",
        )

    def update_weight(self, name, dtype, shape, empty_cache=False):
        if torch.distributed.get_rank() == 0:
            print(f"update weight: {name}, dtype: {dtype}, shape: {shape}")

        assert dtype == self.model_config.dtype, f"mismatch dtype: src {dtype}, dst {self.model_config.dtype}"
        weight = torch.empty(shape, dtype=dtype, device="cuda")
        if self._model_update_with_ray:
            import ray.util.collective as collective

            collective.broadcast(weight, 0, group_name=self._model_update_group)
        else:
            self._model_update_group.broadcast(weight, src=0, stream=torch.cuda.current_stream())

        self.model_runner.model.load_weights(weights=[(name, weight)])

        del weight
        # TODO: should we empty cache if all weights have updated?
        # if empty_cache:
        #     torch.cuda.empty_cache()

    def update_weight_cuda_ipc(self, name, dtype, shape, ipc_handles=None, empty_cache=False):
        if torch.distributed.get_rank() == 0:
            print(f"update weight: {name}, dtype: {dtype}, shape: {shape}")

        assert dtype == self.model_config.dtype, f"mismatch dtype: src {dtype}, dst {self.model_config.dtype}"

        handle = ipc_handles[get_physical_gpu_id()]
        device_id = self.device.index
        func, args = handle
        list_args = list(args)
        # the key is to change device id to the current device id
        # in case two processes have different CUDA_VISIBLE_DEVICES
        list_args[6] = device_id
        weight = func(*list_args)
        self.model_runner.model.load_weights(weights=[(name, weight)])
        torch.cuda.synchronize()

    def report_device_memory(self) -> dict:
        free, total = torch.cuda.mem_get_info()
        return {
            "rank": torch.distributed.get_rank(),
            "free_gb": free / 1024**3,
            "total_gb": total / 1024**3,
            "allocated_gb": torch.cuda.memory_allocated() / 1024**3,
        }

    def check_weights_changed(self) -> bool:
        """Debug helper used by the integration test: compare the first parameter with a cached copy."""
        first_name, first_param = next(iter(self.model_runner.model.named_parameters()))
        changed = getattr(self, "_last_first_param", None)
        self._last_first_param = first_param.detach().to("cpu", copy=True)
        if changed is None:
            return True
        return not torch.equal(changed, self._last_first_param)


class LegacyWorkerWrap(WorkerWrap, Worker):
    """vLLM < 0.8 has no worker_extension_cls; subclass the CUDA worker directly."""

    pass
