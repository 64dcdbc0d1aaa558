"""One-shot / two-shot all-reduce over CUDA IPC buffers for small tensor-parallel messages.

For decode-sized activations (a few hundred KB) NCCL's latency dominates; the custom kernel
reads peers' buffers directly over NVLink/P2P. Falls back to NCCL when the topology is not
fully connected, the world size is unsupported, or the message is too large.
"""
import logging
import os
from contextlib import contextmanager
from typing import List, Optional, Tuple, Union

import torch
import torch.distributed as dist
from torch.distributed import ProcessGroup

from lmdeploy_lite.kernels import custom_ar_ops as ops

try:
    import pynvml
except ImportError:  # pragma: no cover
    pynvml = None

logger = logging.getLogger(__name__)

_SUPPORTED_WORLD_SIZES = (2, 4, 6, 8)
_MAX_CAR_SIZE = 8 * 1024 * 1024


def cuda_device_count_stateless() -> int:
    """Device count that does not initialise CUDA in this process (safe before fork)."""
    if pynvml is None:
        return torch.cuda.device_count()
    pynvml.nvmlInit()
    try:
        return pynvml.nvmlDeviceGetCount()
    finally:
        pynvml.nvmlShutdown()


def _can_p2p(rank: int, world_size: int) -> bool:
    for i in range(world_size):
        if i == rank:
            continue
        if not torch.cuda.can_device_access_peer(rank, i):
            return False
    return True


@contextmanager
def _nvml():
    pynvml.nvmlInit()
    try:
        yield
    finally:
        pynvml.nvmlShutdown()


def _is_full_nvlink(physical_device_ids: List[int]) -> bool:
    if pynvml is None:
        return False
    with _nvml():
        handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in physical_device_ids]
        for i, handle in enumerate(handles):
            for j, peer_handle in enumerate(handles):
                if i < j:
                    try:
                        status = pynvml.nvmlDeviceGetP2PStatus(handle, peer_handle, pynvml.NVML_P2P_CAPS_INDEX_NVLINK)
                        if status != pynvml.NVML_P2P_STATUS_OK:
                            return False
                    except pynvml.NVMLError:
                        logger.exception("NVLink detection failed")
                        return False
    return True


class CustomAllreduce:
    def __init__(self, group: ProcessGroup, device: Union[int, str, torch.device], max_size: int = _MAX_CAR_SIZE):
        self._IS_CAPTURING = False
        self.disabled = True
        self.group = group
        assert dist.get_backend(group) != dist.Backend.NCCL, "attach CustomAllreduce to a CPU (gloo) group"
        rank = dist.get_rank(group=self.group)
        world_size = dist.get_world_size(group=self.group)
        self.rank, self.world_size = rank, world_size
        if world_size == 1:
            return
        if world_size not in _SUPPORTED_WORLD_SIZES:
            logger.warning(f"custom allreduce disabled: world size {world_size} not in {_SUPPORTED_WORLD_SIZES}")
            return
        if isinstance(device, int):
            device = torch.device(f"cuda:{device}")
        elif isinstance(device, str):
            device = torch.device(device)
        self.device = device

        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        device_ids = list(map(int, visible.split(","))) if visible else list(range(cuda_device_count_stateless()))
        physical_id = torch.tensor([device_ids[device.index]], dtype=torch.int, device="cpu")
        gathered = [torch.zeros_like(physical_id) for _ in range(world_size)]
        dist.all_gather(gathered, physical_id, group=self.group)
        self.full_nvlink = _is_full_nvlink([int(t.item()) for t in gathered])
        if world_size > 2 and not self.full_nvlink:
            logger.warning("custom allreduce disabled: GPUs are not fully NVLink-connected")
            return
        if not _can_p2p(rank, world_size):
            logger.warning("custom allreduce disabled: P2P not available")
            return

        self.disabled = False
        self.max_size = max_size
        self.meta = torch.zeros(ops.meta_size() + max_size, dtype=torch.uint8, device=self.device)
        self.buffer = torch.empty(max_size, dtype=torch.uint8, device=self.device)
        self.rank_data = torch.empty(8 * 1024 * 1024, dtype=torch.uint8, device=self.device)
        handles, offsets = self._get_ipc_meta(self.meta)
        self._ptr = ops.init_custom_ar(self.meta, self.rank_data, handles, offsets, rank, self.full_nvlink)
        self.register_buffer(self.buffer)

    def _get_ipc_meta(self, inp: torch.Tensor) -> Tuple[List[bytes], List[int]]:
        data = inp.untyped_storage()._share_cuda_()
        shard = (data[1], data[3])  # (cudaIpcMemHandle bytes, offset)
        all_data = [None] * self.world_size
        dist.all_gather_object(all_data, shard, group=self.group)
        return [d[0] for d in all_data], [d[1] for d in all_data]

    def register_buffer(self, inp: torch.Tensor):
        handles, offsets = self._get_ipc_meta(inp)
        ops.register_buffer(self._ptr, inp, handles, offsets)

    def register_graph_buffers(self):
        handle, offset = ops.get_graph_buffer_ipc_meta(self._ptr)
        all_data = [None] * self.world_size
        dist.all_gather_object(all_data, (handle, offset), group=self.group)
        ops.register_graph_buffers(self._ptr, [d[0] for d in all_data], [d[1] for d in all_data])

    @contextmanager
    def capture(self):
        try:
            self._IS_CAPTURING = True
            yield
        finally:
            self._IS_CAPTURING = False
            if not self.disabled:
                self.register_graph_buffers()

    def should_custom_ar(self, inp: torch.Tensor) -> bool:
        if self.disabled:
            return False
        return ops.should_custom_ar(inp, self.max_size, self.world_size, self.full_nvlink)

    def custom_all_reduce(self, inp: torch.Tensor) -> Optional[torch.Tensor]:
        if self.disabled or not self.should_custom_ar(inp):
            return None
        out = torch.empty_like(inp)
        if self._IS_CAPTURING and torch.cuda.is_current_stream_capturing():
            ops.all_reduce_reg(self._ptr, inp, out)
        elif self._IS_CAPTURING:
            # warm-up before capture: mimic the allocation pattern only
            return torch.empty_like(inp)
        else:
            ops.all_reduce_unreg(self._ptr, inp, self.buffer, out)
        return out

    def close(self):
        if not self.disabled and getattr(self, "_ptr", None):
            ops.dispose(self._ptr)
            self._ptr = 0


class TPCommunicator:
    """Tensor-parallel communicator used by the linear layers of the engine."""

    def __init__(self, ranks: List[int], local_rank: int, use_custom_allreduce: bool = True):
        self.ranks = ranks
        self.world_size = len(ranks)
        self.device = torch.device(f"cuda:{local_rank}")
        torch.cuda.set_device(self.device)
        self.device_group = dist.new_group(ranks, backend="nccl")
        self.cpu_group = dist.new_group(ranks, backend="gloo")
        self.ca_comm = None
        if use_custom_allreduce and self.world_size > 1:
            self.ca_comm = CustomAllreduce(self.cpu_group, self.device)

    @contextmanager
    def graph_capture(self):
        if self.ca_comm is not None and not self.ca_comm.disabled:
            with self.ca_comm.capture():
                yield
        else:
            yield

    def all_reduce(self, x: torch.Tensor) -> torch.Tensor:
        if self.world_size == 1:
            return x
        if self.ca_comm is not None:
            out = self.ca_comm.custom_all_reduce(x)
            if out is not None:
                return out
        dist.all_reduce(x, group=self.device_group)
        return x

    def all_gather(self, x: torch.Tensor, dim: int = -1) -> torch.Tensor:
        if self.world_size == 1:
            return x
        out = torch.empty((self.world_size,) + x.shape, dtype=x.dtype, device=x.device)
        dist.all_gather_into_tensor(out, x.contiguous(), group=self.device_group)
        out = out.movedim(0, dim if dim >= 0 else x.dim() + dim)
        return out.reshape(x.shape[:dim] + (-1,) + x.shape[dim + 1:] if dim != -1 else x.shape[:-1] + (-1,))

    def close(self):
        if self.ca_comm is not None:
            self.ca_comm.close()
