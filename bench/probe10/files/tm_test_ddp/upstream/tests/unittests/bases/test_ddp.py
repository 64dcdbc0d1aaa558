# Copyright The Lightning team.
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
import contextlib
import os
import sys
from copy import deepcopy
from functools import partial

import pytest
import torch
from torch import tensor

from torchmetrics import Metric
from torchmetrics.utilities.distributed import gather_all_tensors
from torchmetrics.utilities.exceptions import TorchMetricsUserError

NUM_PROCESSES = 2
MAX_PORT = 8100
START_PORT = 8088
CURRENT_PORT = START_PORT


def setup_ddp(rank, world_size):
    """Initialize ddp environment."""
    global CURRENT_PORT

    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = str(CURRENT_PORT)

    CURRENT_PORT += 1
    if CURRENT_PORT > MAX_PORT:
        CURRENT_PORT = START_PORT

    if torch.distributed.group.WORLD is not None:  # if already initialized, destroy the process group
        torch.distributed.destroy_process_group()

    if torch.distributed.is_available() and sys.platform not in ("win32", "cygwin"):
        backend = "nccl" if torch.cuda.is_available() else "gloo"
        torch.distributed.init_process_group(backend, rank=rank, world_size=world_size)
        if torch.cuda.is_available():
            torch.cuda.set_device(rank)


def _get_device(rank: int) -> torch.device:
    return torch.device("cuda", rank) if torch.cuda.is_available() else torch.device("cpu")


class DummyMetric(Metric):
    name = "Dummy"
    full_state_update: bool = True

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.add_state("x", tensor(0.0), dist_reduce_fx="sum")

    def update(self):
        pass

    def compute(self):
        pass


class DummyMetricSum(DummyMetric):
    def update(self, x):
        self.x += x

    def compute(self):
        return self.x


class DummyListMetric(Metric):
    full_state_update: bool = True

    def __init__(self) -> None:
        super().__init__()
        self.add_state("x", [], dist_reduce_fx="cat")

    def update(self, x=None):
        self.x.append(tensor(1.0) if x is None else x)

    def compute(self):
        return self.x


def _test_ddp_sum(rank: int, worldsize: int = NUM_PROCESSES) -> None:
    setup_ddp(rank, worldsize)
    dummy = DummyMetric()
    dummy._reductions = {"foo": torch.sum}
    dummy.foo = tensor(1)
    dummy._sync_dist()

    assert dummy.foo == worldsize


def _test_ddp_cat(rank: int, worldsize: int = NUM_PROCESSES) -> None:
    setup_ddp(rank, worldsize)
    dummy = DummyMetric()
    dummy._reductions = {"foo": torch.cat}
    dummy.foo = [tensor([1])]
    dummy._sync_dist()

    assert torch.equal(dummy.foo, tensor([1, 1]))


def _test_ddp_gather_uneven_tensors(rank: int, worldsize: int = NUM_PROCESSES) -> None:
    setup_ddp(rank, worldsize)
    device = _get_device(rank)
    tensor_ = torch.ones(rank, device=device)
    result = gather_all_tensors(tensor_)
    assert len(result) == worldsize
    for idx in range(worldsize):
        assert len(result[idx]) == idx
        assert (result[idx] == torch.ones_like(result[idx])).all()


def _test_ddp_compositional_tensor(rank: int, worldsize: int = NUM_PROCESSES) -> None:
    setup_ddp(rank, worldsize)
    dummy = DummyMetricSum()
    dummy._reductions = {"x": torch.sum}
    dummy = dummy.clone() + dummy.clone()
    dummy.update(tensor(1))
    val = dummy.compute()
    assert val == 2 * worldsize


@pytest.mark.DDP()
@pytest.mark.skipif(sys.platform == "win32", reason="DDP not available on windows")
@pytest.mark.parametrize(
    "process",
    [
        _test_ddp_cat,
        _test_ddp_sum,
        _test_ddp_gather_uneven_tensors,
        _test_ddp_compositional_tensor,
    ],
)
def test_ddp(process):
    """Test ddp functions."""
    torch.multiprocessing.spawn(process, args=(NUM_PROCESSES,), nprocs=NUM_PROCESSES)


def _test_non_contiguous_tensors(rank):
    class DummyCatMetric(Metric):
        full_state_update = True

        def __init__(self) -> None:
            super().__init__()
            self.add_state("x", default=[], dist_reduce_fx=None)

        def update(self, x):
            self.x.append(x)

        def compute(self):
            x = torch.cat(self.x, dim=0)
            return x.sum()

    metric = DummyCatMetric()
    metric.update(torch.randn(10, 5)[:, 0])


@pytest.mark.DDP()
@pytest.mark.skipif(sys.platform == "win32", reason="DDP not available on windows")
def test_non_contiguous_tensors():
    """Test that gather_all operation works for non-contiguous tensors."""
    torch.multiprocessing.spawn(_test_non_contiguous_tensors, args=(), nprocs=NUM_PROCESSES)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="Test requires GPU.")
def test_state_dict_is_synced_on_gpu():
    """Check that the states are moved to the GPU and synced when the state dict is built."""
    metric = DummyMetricSum().to("cuda")
    metric.update(torch.tensor(2.0, device="cuda"))
    assert metric.x.device.type == "cuda"
    state = metric.state_dict()
    assert state == {} or state["x"].device.type == "cuda"


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_metric_device_move(device):
    """Test that the metric states follow `.to(device)` and that `compute` works there."""
    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("Test requires GPU support")

    metric = DummyMetricSum().to(device)
    assert metric.device == torch.device(device) or metric.device.type == device
    metric.update(torch.tensor(3.0, device=device))
    assert metric.compute().device.type == device
    metric.reset()
    assert metric.x.device.type == device


@pytest.mark.parametrize("compute_on_cpu", [True, False])
def test_compute_on_cpu_arg(compute_on_cpu):
    """Test that the `compute_on_cpu` argument moves list states to the CPU after `update`."""
    metric = DummyListMetric()
    metric.compute_on_cpu = compute_on_cpu
    device = "cuda" if torch.cuda.is_available() else "cpu"
    metric = metric.to(device)
    for _ in range(3):
        metric.update(torch.randn(2, device=device))
    if compute_on_cpu:
        metric._move_list_states_to_cpu()
        assert all(x.device.type == "cpu" for x in metric.x)
    else:
        assert all(x.device.type == device for x in metric.x)


def test_raises_if_update_after_compute_when_sync_off():
    metric = DummyMetricSum(sync_on_compute=False)
    metric.update(tensor(1.0))
    metric.compute()
    with contextlib.suppress(TorchMetricsUserError):
        metric.update(tensor(1.0))
