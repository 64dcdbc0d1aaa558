#  Copyright 2022 Lefebvre Sarrut
#
#  Licensed under the Apache License, Version 2.0 (the "License");
#  you may not use this file except in compliance with the License.
#  You may obtain a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
#  Unless required by applicable law or agreed to in writing, software
#  distributed under the License is distributed on an "AS IS" BASIS,
#  WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
#  See the License for the specific language governing permissions and
#  limitations under the License.
#

"""CUDA graph capture of the optimized FX graph.

Triton kernels have a high CPU launch overhead (the Python launcher does argument binding and
cache lookups on every call). Capturing the whole model in a CUDA graph removes it: replaying the
graph is a single `cudaGraphLaunch`. All graphs share a single memory pool so that several input
shapes can be captured without duplicating the activations memory.
"""

import logging
from typing import Callable, Dict, List, Tuple, Union

import torch
from torch._dynamo import utils as dynamo_utils
from torch._inductor.compile_fx import cudagraphify_impl
from torch._subclasses import FakeTensor


logger = logging.getLogger(__name__)

static_inputs_pool: List[Dict[Tuple[int, ...], List[torch.Tensor]]] = []

# a single pool shared by all captured graphs, see
# https://pytorch.org/docs/stable/notes/cuda.html#graph-memory-management
_GRAPH_POOL = None


def get_pool():
    global _GRAPH_POOL
    if _GRAPH_POOL is None:
        _GRAPH_POOL = torch.cuda.graph_pool_handle()
    return _GRAPH_POOL


def get_static_inputs(device_index: int, input_shapes: List[Tuple[int, ...]], pool: Dict) -> List[torch.Tensor]:
    """Reuse the same static input buffers for graphs with identical input shapes."""
    key = tuple(input_shapes)
    if key not in pool:
        pool[key] = [torch.empty(s, device=f"cuda:{device_index}", dtype=torch.int64) for s in input_shapes]
    return pool[key]


def cuda_graphs_wrapper(
    model: Callable, inputs: Union[List[torch.Tensor], Tuple[torch.Tensor]], copy_outputs: bool = False
):
    """
    From torchdynamo
    """
    assert isinstance(inputs, (list, tuple)), f"inputs is of type {type(inputs)} instead of list"
    # the graph must not contain any CPU tensor: a CUDA graph only records kernels on the capture stream
    if any(isinstance(x, FakeTensor) for x in inputs):
        return model
    for x in inputs:
        assert x.is_cuda, f"all inputs of the captured graph must be on GPU, found {x.device}"

    device_index = inputs[0].device.index
    while len(static_inputs_pool) <= device_index:
        static_inputs_pool.append(dict())

    input_shapes = [tuple(x.shape) for x in inputs]
    static_inputs = get_static_inputs(device_index, input_shapes, static_inputs_pool[device_index])
    for static_input, x in zip(static_inputs, inputs):
        static_input.copy_(x)

    # warmup on a side stream, as recommended by the PyTorch documentation
    torch.cuda.synchronize(device_index)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            model(*inputs)
    stream.synchronize()
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()

    # record
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream, pool=get_pool()):
        static_outputs = model(*static_inputs)
    if not isinstance(static_outputs, (list, tuple)):
        static_outputs = (static_outputs,)
    logger.debug("captured CUDA graph for input shapes %s", input_shapes)

    def run(*new_inputs):
        assert len(static_inputs) == len(new_inputs)
        if dynamo_utils.counters["stats"].get("cuda_graph_replays", 0) == 0:
            logger.info("first CUDA graph replay")
        for dst, src in zip(static_inputs, new_inputs):
            dst.copy_(src)
        graph.replay()
        dynamo_utils.counters["stats"]["cuda_graph_replays"] += 1
        if copy_outputs:
            return [x.clone() for x in static_outputs]
        else:
            return static_outputs

    return run


def inductor_cudagraphs(model: Callable, inputs):
    """Alternative path relying on inductor's implementation (used for benchmarks only)."""
    return cudagraphify_impl(model, inputs, static_input_idxs=())


def reset_graph_pool():
    """Release all the static buffers, used between benchmarks of different models."""
    global _GRAPH_POOL
    static_inputs_pool.clear()
    _GRAPH_POOL = None
    torch.cuda.empty_cache()
