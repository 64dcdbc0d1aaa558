# Copyright 2022 NNAISENSE SA
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#    http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""Definitions of the core classes: Problem, Solution, and SolutionBatch.

This module is an excerpt that keeps the parts of ``Problem`` dealing with
devices, Ray actors and GPU allocation.
"""

import logging
import math
import os
from typing import Any, Callable, Iterable, Optional, Union

import numpy as np
import ray
import torch

from .tools import Device, DType, ReadOnlyTensor, cast_tensors_in_container, is_integer, to_torch_dtype
from .tools.objectarray import ObjectArray
from .tools.ranking import rank
from .tools.tensormaker import TensorMakerMixin

_logger = logging.getLogger(__name__)

ObjectiveSense = Union[str, Iterable[str]]
BoundsPairLike = tuple

#: Strings accepted by ``num_actors`` in addition to integers.
_NUM_ACTORS_SPECIAL = ("max", "num_cpus", "num_gpus", "num_devices")


def _ensure_ray():
    if not ray.is_initialized():
        _logger.info(
            "The method `ray.init()` will be called by EvoTorch because the problem was configured"
            " to use multiple actors and ray was not initialized yet."
        )
        ray.init()


def _num_gpus_in_cluster() -> float:
    """Total number of GPUs that Ray sees in the cluster."""
    return ray.cluster_resources().get("GPU", 0)


class Problem(TensorMakerMixin):
    """
    Representation of a problem to be optimized.

    Parameters
    ----------
    objective_sense: "min" or "max", or a list of them for multi-objective problems.
    objective_func: Optionally a fitness function. If given, ``_evaluate`` need not be overriden.
    solution_length: Length of a solution (required for numeric problems).
    initial_bounds: Bounds used when sampling the initial population.
    dtype: dtype of a solution.
    device: Main device of the problem. Solutions are stored here. If the problem is configured
        to use multiple actors, this must be "cpu"; the actors may still use the GPUs via
        ``num_gpus_per_actor``.
    num_actors: Number of Ray actors. Can be an integer or one of "max", "num_cpus",
        "num_gpus", "num_devices".
    num_gpus_per_actor: Number of GPUs to allocate to each actor. Can be a float (e.g. 0.5 to
        share one GPU between two actors), "max" to split all GPUs evenly, or "all".
    actor_config: Additional keyword arguments forwarded to ``ray.remote(...)``.
    """

    def __init__(
        self,
        objective_sense: ObjectiveSense,
        objective_func: Optional[Callable] = None,
        *,
        initial_bounds: Optional[BoundsPairLike] = None,
        bounds: Optional[BoundsPairLike] = None,
        solution_length: Optional[int] = None,
        dtype: Optional[DType] = None,
        eval_dtype: Optional[DType] = None,
        device: Optional[Device] = None,
        eval_data_length: Optional[int] = None,
        seed: Optional[int] = None,
        num_actors: Optional[Union[int, str]] = None,
        actor_config: Optional[dict] = None,
        num_gpus_per_actor: Optional[Union[int, float, str]] = None,
        num_subbatches: Optional[int] = None,
        subbatch_size: Optional[int] = None,
        store_solution_stats: Optional[bool] = None,
        vectorized: Optional[bool] = None,
    ):
        self._objective_func = objective_func
        self._vectorized = bool(vectorized) if vectorized is not None else False

        if isinstance(objective_sense, str):
            self._senses = [objective_sense]
        else:
            self._senses = list(objective_sense)
        for s in self._senses:
            if s not in ("min", "max"):
                raise ValueError(f"Unrecognized objective sense: {s!r}")

        self._dtype = to_torch_dtype(torch.float32 if dtype is None else dtype)
        self._eval_dtype = to_torch_dtype(torch.float32 if eval_dtype is None else eval_dtype)
        self._solution_length = solution_length
        self._eval_data_length = 0 if eval_data_length is None else int(eval_data_length)

        # The main device. Note that "cuda" without an index means the current cuda device.
        if device is None:
            device = "cpu"
        self._device = torch.device(device)

        self._initial_bounds = initial_bounds
        self._bounds = bounds

        if seed is not None:
            self.manual_seed(seed)

        self._store_solution_stats = store_solution_stats
        self._num_subbatches = num_subbatches
        self._subbatch_size = subbatch_size

        # ----- actor configuration -----
        self._actor_config = {} if actor_config is None else dict(actor_config)
        self._num_actors = self._parse_num_actors(num_actors)
        self._num_gpus_per_actor = self._parse_num_gpus_per_actor(num_gpus_per_actor)
        self._actors = None
        self._actor_pool = None
        self._actor_index = None

        if (self._num_actors > 1) and (self._device.type != "cpu"):
            raise ValueError(
                "The problem is configured to use multiple actors, but its main device is"
                f" {self._device}. When using actors, the main device must be 'cpu'. To let the"
                " actors use the GPUs, set `num_gpus_per_actor` instead."
            )

    # ------------------------------------------------------------------
    # parsing of the parallelization arguments
    # ------------------------------------------------------------------
    def _parse_num_actors(self, num_actors) -> int:
        if num_actors is None:
            return 0
        if isinstance(num_actors, str):
            if num_actors not in _NUM_ACTORS_SPECIAL:
                raise ValueError(f"Unrecognized `num_actors` string: {num_actors!r}")
            _ensure_ray()
            if num_actors in ("max", "num_cpus"):
                return int(ray.cluster_resources()["CPU"])
            if num_actors == "num_gpus":
                n = int(_num_gpus_in_cluster())
                if n == 0:
                    raise ValueError("num_actors='num_gpus' was requested but Ray sees no GPU")
                return n
            if num_actors == "num_devices":
                n = int(_num_gpus_in_cluster())
                return n if n > 0 else int(ray.cluster_resources()["CPU"])
        if not is_integer(num_actors):
            raise TypeError(f"`num_actors` must be an int or a string, got {num_actors!r}")
        return int(num_actors)

    def _parse_num_gpus_per_actor(self, num_gpus_per_actor) -> float:
        if num_gpus_per_actor is None:
            return 0
        if self._num_actors <= 1:
            _logger.warning("`num_gpus_per_actor` is ignored because the problem has no actors")
            return 0
        if num_gpus_per_actor == "max":
            return _num_gpus_in_cluster() / self._num_actors
        if num_gpus_per_actor == "all":
            return _num_gpus_in_cluster()
        return float(num_gpus_per_actor)

    # ------------------------------------------------------------------
    # devices
    # ------------------------------------------------------------------
    @property
    def device(self) -> torch.device:
        """The main device of the problem, where solutions are stored."""
        return self._device

    @property
    def aux_device(self) -> torch.device:
        """
        Auxiliary device to help with the computations, most commonly for
        speeding up the fitness evaluations.

        The default implementation returns ``torch.device("cuda")`` if
        PyTorch's cuda backend is available and at least one cuda device is
        visible, and ``torch.device("cpu")`` otherwise. Inside a Ray actor
        with ``num_gpus_per_actor > 0``, Ray sets CUDA_VISIBLE_DEVICES so that
        "cuda" refers to the GPU(s) assigned to that actor.
        """
        if torch.cuda.is_available():
            num_visible = torch.cuda.device_count()
            if num_visible == 0:
                return torch.device("cpu")
            if self._actor_index is not None and num_visible > 1:
                return torch.device("cuda", self._actor_index % num_visible)
            return torch.device("cuda")
        return torch.device("cpu")

    def manual_seed(self, seed: Optional[int] = None):
        """Seed the problem's own random generator (CPU) and, if present, the GPU generators."""
        if seed is None:
            seed = int(np.random.randint(0, 2**31 - 1))
        self._generator = torch.Generator(device=self._device)
        self._generator.manual_seed(seed)
        if self._device.type == "cuda":
            torch.cuda.manual_seed(seed)

    # ------------------------------------------------------------------
    # actors
    # ------------------------------------------------------------------
    def _actor_options(self) -> dict:
        options = dict(self._actor_config)
        if self._num_gpus_per_actor > 0:
            options.setdefault("num_gpus", self._num_gpus_per_actor)
        return options

    def _parallelize(self):
        if self._num_actors <= 1 or self._actors is not None:
            return
        _ensure_ray()
        options = self._actor_options()
        _logger.info(
            "Creating %d actors for %s (options=%s)", self._num_actors, type(self).__name__, options
        )
        actor_cls = ray.remote(**options)(EvaluationActor) if options else ray.remote(EvaluationActor)
        self._actors = []
        for i in range(self._num_actors):
            self._actors.append(actor_cls.remote(self, i, self._actor_seed(i)))
        self._actor_pool = ray.util.ActorPool(self._actors)

    def _actor_seed(self, index: int) -> int:
        return int(torch.randint(0, 2**31 - 1, (1,), generator=self._generator).item()) + index

    def kill_actors(self):
        if self._actors is None:
            return
        for actor in self._actors:
            ray.kill(actor)
        self._actors = None
        self._actor_pool = None

    # ------------------------------------------------------------------
    # evaluation
    # ------------------------------------------------------------------
    def evaluate(self, x):
        if self._num_actors > 1:
            self._parallelize()
            return self._evaluate_all_distributed(x)
        return self._evaluate_all(x)

    def _evaluate_all(self, batch):
        if self._vectorized:
            values = batch.values
            if getattr(self._objective_func, "__evotorch_on_aux_device__", False):
                values = values.to(self.aux_device)
            fitnesses = self._objective_func(values)
            batch.set_evals(fitnesses.to(batch.device))
        else:
            for sln in batch:
                sln.set_evals(self._objective_func(sln.values))

    def _evaluate_all_distributed(self, batch):
        pieces = batch.split(self._num_actors)
        results = list(self._actor_pool.map(lambda a, p: a.evaluate_batch_piece.remote(p), pieces))
        for piece, evals in zip(pieces, results):
            piece.set_evals(evals)

    def _sync_after_eval(self):
        # Make sure asynchronous GPU kernels have finished before timing the generation.
        if self.aux_device.type == "cuda":
            torch.cuda.synchronize(self.aux_device)


    # ------------------------------------------------------------------
    # misc. queries used by the searchers and loggers
    # ------------------------------------------------------------------
    @property
    def senses(self) -> list:
        return list(self._senses)

    @property
    def is_multi_objective(self) -> bool:
        return len(self._senses) > 1

    @property
    def solution_length(self) -> Optional[int]:
        return self._solution_length

    @property
    def dtype(self) -> torch.dtype:
        return self._dtype

    @property
    def eval_dtype(self) -> torch.dtype:
        return self._eval_dtype

    @property
    def initial_lower_bounds(self) -> Optional[torch.Tensor]:
        if self._initial_bounds is None:
            return None
        lb = torch.as_tensor(self._initial_bounds[0], dtype=self._dtype, device=self._device)
        return lb.expand(self._solution_length) if lb.ndim == 0 else lb

    @property
    def initial_upper_bounds(self) -> Optional[torch.Tensor]:
        if self._initial_bounds is None:
            return None
        ub = torch.as_tensor(self._initial_bounds[1], dtype=self._dtype, device=self._device)
        return ub.expand(self._solution_length) if ub.ndim == 0 else ub

    def generate_values(self, num_solutions: int) -> torch.Tensor:
        """Samples ``num_solutions`` uniformly within the initial bounds, on the main device."""
        lb, ub = self.initial_lower_bounds, self.initial_upper_bounds
        if lb is None:
            raise RuntimeError("Cannot generate values: initial_bounds were not given")
        u = torch.rand(
            (num_solutions, self._solution_length), generator=self._generator, dtype=self._dtype, device=self._device
        )
        return lb + u * (ub - lb)

    def compare_solutions(self, a: float, b: float, obj_index: int = 0) -> float:
        """Positive if ``a`` is better than ``b`` w.r.t. the objective sense."""
        return (a - b) if self._senses[obj_index] == "max" else (b - a)

    def utility(self, evals: torch.Tensor, ranking_method: Optional[str] = "centered", obj_index: int = 0):
        """Fitness shaping used by the distribution-based searchers."""
        higher_is_better = self._senses[obj_index] == "max"
        return rank(evals[:, obj_index], ranking_method=ranking_method, higher_is_better=higher_is_better)

    def status_summary(self) -> dict:
        """Small dict logged by StdOutLogger at every generation."""
        return {
            "device": str(self._device),
            "num_actors": self._num_actors,
            "num_gpus_per_actor": self._num_gpus_per_actor,
            "vectorized": self._vectorized,
        }

    def __getstate__(self):
        state = dict(self.__dict__)
        # Ray actors and the pool cannot be pickled; actors get their own copy.
        state["_actors"] = None
        state["_actor_pool"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)


class EvaluationActor:
    """A Ray actor holding a private copy of the problem."""

    def __init__(self, problem: Problem, actor_index: int, seed: int):
        os.environ.setdefault("OMP_NUM_THREADS", "1")
        torch.set_num_threads(1)
        self.problem = problem
        self.problem._actors = None
        self.problem._num_actors = 0
        self.problem._actor_index = actor_index
        self.problem.manual_seed(seed)
        gpu_ids = ray.get_gpu_ids()
        if len(gpu_ids) > 0:
            _logger.info("Actor %d is using GPU(s) %s", actor_index, gpu_ids)

    def evaluate_batch_piece(self, batch_piece):
        self.problem._evaluate_all(batch_piece)
        return batch_piece.access_evals()

    def call(self, method_name: str, args: Any, kwargs: Any) -> Any:
        return getattr(self.problem, method_name)(*args, **kwargs)
