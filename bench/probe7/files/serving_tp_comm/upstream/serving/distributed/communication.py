"""Tensor-parallel communication for the inference engine.

* one NCCL device group + one gloo CPU group per TP group
* a one-shot/two-shot custom all-reduce over CUDA IPC buffers for small messages on NVLink boxes
* PyNccl for collectives inside CUDA-graph capture (torch.distributed NCCL calls are not capturable
  with every PyTorch version)
"""
import os
from contextlib import contextmanager
from dataclasses import dataclass
from typing import List, Optional

import torch
import torch.distributed as dist
from torch.distributed import ProcessGroup

from serving.logger import init_logger

try:
    from serving._C import custom_ar
except ImportError:
    # ROCm / CPU builds, or the extension was not compiled
    custom_ar = None

try:
    import pynvml
except ImportError:
    pynvml = None

logger = init_logger(__name__)

_SUPPORTED_WORLD_SIZES = [2, 4, 6, 8]
_MAX_CAR_SIZE = 8 * 1024 * 1024


@dataclass
class GraphCaptureContext:
    stream: "torch.cuda.Stream"


def _is_full_nvlink(physical_device_ids: List[int]) -> bool:
    """Query NVML: every pair of GPUs must be connected by NVLink."""
    pynvml.nvmlInit()
    try:
        handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in physical_device_ids]
        for i, handle in enumerate(handles):
            for j, peer_handle in enumerate(handles):
                if i < j:
                    try:
                        p2p_status = pynvml.nvmlDeviceGetP2PStatus(handle, peer_handle,
                                                                   pynvml.NVML_P2P_CAPS_INDEX_NVLINK)
                        if p2p_status != pynvml.NVML_P2P_STATUS_OK:
                            return False
                    except pynvml.NVMLError:
                        logger.exception("NVLink detection failed; assuming no full NVLink.")
                        return False
        return True
    finally:
        pynvml.nvmlShutdown()


class CustomAllreduce:

    def __init__(self, group: ProcessGroup, device: torch.device, max_size: int = _MAX_CAR_SIZE):
        self.disabled = True
        if custom_ar is None:
            return
        self.group = group
        rank = dist.get_rank(group=self.group)
        world_size = dist.get_world_size(group=self.group)
        if world_size == 1 or world_size not in _SUPPORTED_WORLD_SIZES:
            return
        if "CUDA_VISIBLE_DEVICES" in os.environ:
            device_ids = list(map(int, os.environ["CUDA_VISIBLE_DEVICES"].split(",")))
        else:
            device_ids = list(range(torch.cuda.device_count()))
        physical_device_id = device_ids[device.index]
        tensor = torch.tensor([physical_device_id], dtype=torch.int, device="cpu")
        gather_list = [torch.tensor([0], dtype=torch.int, device="cpu") for _ in range(world_size)]
        dist.all_gather(gather_list, tensor, group=self.group)
        physical_device_ids = [t.item() for t in gather_list]
        if pynvml is None or (world_size > 2 and not _is_full_nvlink(physical_device_ids)):
            logger.warning("Custom allreduce is disabled because this box has no full NVLink mesh.")
            return
        self.meta = torch.zeros(custom_ar.meta_size() + max_size, dtype=torch.uint8, device=device)
        self.buffer = torch.empty(max_size, dtype=torch.uint8, device=device)
        self.rank_data = torch.empty(8 * 1024 * 1024, dtype=torch.uint8, device=device)
        self.max_size = max_size
        self.rank = rank
        self.world_size = world_size
        handles, offsets = self._get_ipc_meta(self.meta)
        self._ptr = custom_ar.init_custom_ar(self.meta, self.rank_data, handles, offsets, rank, True)
        self.register_buffer(self.buffer)
        self.disabled = False

    def _get_ipc_meta(self, inp: torch.Tensor):
        data = inp.untyped_storage()._share_cuda_()
        shard_data = (data[1], data[3])  # ipc handle, offset
        all_data = [[None, None] for _ in range(self.world_size)]
        all_data[self.rank] = list(shard_data)
        for i in range(self.world_size):
            dist.broadcast_object_list(all_data[i], src=dist.get_global_rank(self.group, i),
                                       group=self.group, device="cpu")
        return [d[0] for d in all_data], [d[1] for d in all_data]

    def register_buffer(self, inp: torch.Tensor):
        handles, offsets = self._get_ipc_meta(inp)
        custom_ar.register_buffer(self._ptr, inp, handles, offsets)

    def should_custom_ar(self, inp: torch.Tensor) -> bool:
        if self.disabled:
            return False
        inp_size = inp.numel() * inp.element_size()
        if inp_size % 16 != 0:
            return False
        return inp_size < self.max_size

    def all_reduce(self, inp: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(inp)
        custom_ar.all_reduce_reg(self._ptr, inp, out)
        return out


class TPGroupCoordinator:
    """Owns the process groups of one tensor-parallel group and routes collectives."""

    def __init__(self, group_ranks: List[List[int]], local_rank: int, use_custom_allreduce: bool = True):
        self.rank = dist.get_rank()
        self.local_rank = local_rank
        self.device_group = None
        self.cpu_group = None
        for ranks in group_ranks:
            device_group = dist.new_group(ranks, backend="nccl")
            # a group with `gloo` backend, to allow direct coordination between processes through the CPU.
            cpu_group = dist.new_group(ranks, backend="gloo")
            if self.rank in ranks:
                self.ranks = ranks
                self.world_size = len(ranks)
                self.rank_in_group = ranks.index(self.rank)
                self.device_group = device_group
                self.cpu_group = cpu_group
        assert self.cpu_group is not None and self.device_group is not None

        self.device = torch.device(f"cuda:{local_rank}")
        torch.cuda.set_device(self.device)

        self.pynccl_comm = None
        if dist.get_backend(self.device_group) == "nccl" and self.world_size > 1:
            from serving.distributed.pynccl import PyNcclCommunicator
            self.pynccl_comm = PyNcclCommunicator(group=self.cpu_group, device=self.device)

        self.ca_comm: Optional[CustomAllreduce] = None
        if use_custom_allreduce and self.world_size > 1:
            self.ca_comm = CustomAllreduce(group=self.cpu_group, device=self.device)

    @contextmanager
    def graph_capture(self, graph_capture_context: Optional[GraphCaptureContext] = None):
        if graph_capture_context is None:
            stream = torch.cuda.Stream()
            graph_capture_context = GraphCaptureContext(stream)
        else:
            stream = graph_capture_context.stream

        # ensure all initialization operations complete before attempting to
        # capture the graph on another stream
        curr_stream = torch.cuda.current_stream()
        if curr_stream != stream:
            stream.wait_stream(curr_stream)

        with torch.cuda.stream(stream):
            if self.pynccl_comm is not None:
                with self.pynccl_comm.change_state(enable=True, stream=stream):
                    yield graph_capture_context
            else:
                yield graph_capture_context

    def all_reduce(self, input_: torch.Tensor) -> torch.Tensor:
        if self.world_size == 1:
            return input_
        ca_comm = self.ca_comm
        if ca_comm is not None and not ca_comm.disabled and ca_comm.should_custom_ar(input_):
            return ca_comm.all_reduce(input_)
        if torch.cuda.is_current_stream_capturing() and self.pynccl_comm is not None:
            self.pynccl_comm.all_reduce(input_)
        else:
            dist.all_reduce(input_, group=self.device_group)
        return input_

    def all_gather(self, input_: torch.Tensor, dim: int = -1) -> torch.Tensor:
        if self.world_size == 1:
            return input_
        if dim < 0:
            dim += input_.dim()
        input_size = input_.size()
        output_tensor = torch.empty((self.world_size,) + input_size, dtype=input_.dtype, device=input_.device)
        dist.all_gather_into_tensor(output_tensor, input_.contiguous(), group=self.device_group)
        output_tensor = output_tensor.movedim(0, dim)
        return output_tensor.reshape(input_size[:dim] + (self.world_size * input_size[dim],) + input_size[dim + 1:])

    def gather(self, input_: torch.Tensor, dst: int = 0, dim: int = -1) -> Optional[torch.Tensor]:
        if self.world_size == 1:
            return input_
        if self.rank_in_group == dst:
            gather_list = [torch.empty_like(input_) for _ in range(self.world_size)]
        else:
            gather_list = None
        dist.gather(input_, gather_list, dst=self.ranks[dst], group=self.device_group)
        if self.rank_in_group == dst:
            return torch.cat(gather_list, dim=dim)
        return None

    def broadcast_object(self, obj=None, src: int = 0):
        if self.world_size == 1:
            return obj
        if self.rank_in_group == src:
            dist.broadcast_object_list([obj], src=self.ranks[src], group=self.cpu_group)
            return obj
        recv = [None]
        dist.broadcast_object_list(recv, src=self.ranks[src], group=self.cpu_group)
        return recv[0]

    def barrier(self):
        dist.barrier(group=self.cpu_group)

    def destroy(self):
        if self.device_group is not None:
            dist.destroy_process_group(self.device_group)
            self.device_group = None
        if self.cpu_group is not None:
            dist.destroy_process_group(self.cpu_group)
            self.cpu_group = None
        self.pynccl_comm = None
        self.ca_comm = None


def init_distributed_environment(world_size: int, rank: int, local_rank: int,
                                 distributed_init_method: str = "env://", backend: str = "nccl"):
    if not dist.is_initialized():
        dist.init_process_group(backend=backend, init_method=distributed_init_method,
                                world_size=world_size, rank=rank)
    # warm up the device group so the first real collective does not pay the communicator setup
    data = torch.zeros(1, device=f"cuda:{local_rank}")
    dist.all_reduce(data)
    torch.cuda.synchronize()
    del data
