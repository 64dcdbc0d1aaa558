# Copyright (c) Meta Platforms, Inc. and affiliates.
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

# pyre-unsafe

import logging
import os
from typing import Dict, List, Optional, Tuple

import torch
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

logger: logging.Logger = logging.getLogger(__name__)

# Number of batches each worker keeps in flight. The GPU consumes batches much
# faster than the csv parsing can produce them, so we over-provision.
DEFAULT_PREFETCH_FACTOR: int = 128


def create_data_loader(
    dataset: Dataset,
    batch_size: int,
    world_size: int,
    rank: int,
    shuffle: bool,
    prefetch_factor: int = DEFAULT_PREFETCH_FACTOR,
    num_workers: Optional[int] = None,
    drop_last: bool = False,
) -> Tuple[Optional[DistributedSampler], DataLoader]:
    if shuffle:
        sampler = DistributedSampler(
            dataset,
            num_replicas=world_size,
            rank=rank,
            shuffle=True,
            seed=0,
            drop_last=drop_last,
        )
    else:
        sampler = None
    if num_workers is None:
        num_workers = min(os.cpu_count() or 1, 8)
    data_loader = DataLoader(
        dataset,
        batch_size=batch_size,
        shuffle=False,  # the sampler shuffles
        num_workers=num_workers,
        sampler=sampler,
        prefetch_factor=prefetch_factor if num_workers > 0 else None,
        pin_memory=True,
        persistent_workers=num_workers > 0,
        collate_fn=collate_variable_length,
    )
    return sampler, data_loader


def collate_variable_length(
    rows: List[Dict[str, torch.Tensor]],
) -> Dict[str, torch.Tensor]:
    """Stacks fixed-size (already left-padded) history tensors.

    The dataset pads every history to ``max_sequence_length`` so the default
    stacking works; lengths travel alongside so the model can build jagged
    offsets on device.
    """
    out: Dict[str, torch.Tensor] = {}
    for key in rows[0].keys():
        values = [r[key] for r in rows]
        if isinstance(values[0], torch.Tensor):
            out[key] = torch.stack(values, dim=0)
        else:
            out[key] = torch.as_tensor(values)
    return out


class DevicePrefetcher:
    """Overlaps host->device copies of batch t+1 with compute on batch t.

    A dedicated CUDA stream issues the non-blocking copies; ``next()`` makes the
    compute stream wait on it before handing out the batch.
    """

    def __init__(self, loader: DataLoader, device: torch.device) -> None:
        self._loader = loader
        self._device = device
        self._stream = torch.cuda.Stream(device=device)
        self._iter = None
        self._next: Optional[Dict[str, torch.Tensor]] = None

    def __iter__(self) -> "DevicePrefetcher":
        self._iter = iter(self._loader)
        self._preload()
        return self

    def _preload(self) -> None:
        assert self._iter is not None
        try:
            batch = next(self._iter)
        except StopIteration:
            self._next = None
            return
        with torch.cuda.stream(self._stream):
            self._next = {
                k: v.to(self._device, non_blocking=True) for k, v in batch.items()
            }

    def __next__(self) -> Dict[str, torch.Tensor]:
        torch.cuda.current_stream(self._device).wait_stream(self._stream)
        batch = self._next
        if batch is None:
            raise StopIteration
        for v in batch.values():
            # tell the caching allocator these tensors are now used by the
            # compute stream, otherwise their memory could be reused early
            v.record_stream(torch.cuda.current_stream(self._device))
        self._preload()
        return batch

    def __len__(self) -> int:
        return len(self._loader)


def batch_to_device(
    batch: Dict[str, torch.Tensor],
    device: torch.device,
) -> Dict[str, torch.Tensor]:
    return {k: v.to(device, non_blocking=True) for k, v in batch.items()}


def log_loader_stats(loader: DataLoader, rank: int) -> None:
    if rank != 0:
        return
    logger.info(
        f"DataLoader: batch_size={loader.batch_size}, workers={loader.num_workers}, "
        f"pin_memory={loader.pin_memory} (host memory is page-locked for faster H2D to the GPU)"
    )
