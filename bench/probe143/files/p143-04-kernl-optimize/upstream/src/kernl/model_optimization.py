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

"""Entry point of kernl: `optimize_model(model)` swaps PyTorch ops for Triton kernels.

The model is traced with TorchDynamo; the resulting FX graph is rewritten by pattern matching
(attention, linear + activation, layernorm) and finally captured in a CUDA graph.
"""

import logging
import os
import warnings
from typing import Callable, List, Optional

import torch
import torch._dynamo as torchdynamo
from torch.fx import GraphModule

from kernl.optimizer.cuda_graph import cuda_graphs_wrapper
from kernl.optimizer.dynamo_backend import dynamo_backend_ofi


logger = logging.getLogger(__name__)

_MIN_CAPABILITY = (8, 0)

# the dynamo cache limit is low by default (8), and each new sequence length triggers a recompilation
torchdynamo.config.cache_size_limit = 512
torchdynamo.config.dynamic_shapes = False


def _check_environment(device: Optional[torch.device] = None) -> None:
    if not torch.cuda.is_available():
        raise RuntimeError("kernl requires a CUDA capable GPU, none was found")
    capability = torch.cuda.get_device_capability(device)
    if capability < _MIN_CAPABILITY:
        warnings.warn(
            f"kernl is only tested on Ampere and newer GPUs (compute capability >= 8.0), found {capability}. "
            "Kernels may fail to compile or be slower than PyTorch."
        )
    if os.environ.get("CUDA_LAUNCH_BLOCKING", "0") == "1":
        logger.warning("CUDA_LAUNCH_BLOCKING=1 is set, CUDA graphs will be much slower")


def compiler(gm: GraphModule, example_inputs: List[torch.Tensor]) -> Callable:
    """Custom TorchDynamo backend: replace patterns by Triton kernels and wrap in a CUDA graph."""
    dynamo_backend_ofi(gm)
    return cuda_graphs_wrapper(gm, example_inputs)


def _enable_tf32() -> None:
    # Triton matmuls use TF32 internally (allow_tf32=True), keep PyTorch ops consistent
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True


def optimize_model(original_model: torch.nn.Module) -> None:
    """
    Optimizes a given model. Optimization is done in two steps:
    *  first step is to convert the given model to fx graph.
    *  second step is to replace patterns found in the graph in order to optimize the model.

    @return: returns the optimized model (and the original model is modified, so it can not be used after optimization).

    Example:
        model_name = "BaptisteDoyen/camembert-base-xnli"
        model = AutoModel.from_pretrained(model_name).eval().cuda()

        optimize_model(model)
        inputs = ...
        model(**inputs)
    """
    _check_environment()
    _enable_tf32()
    assert next(original_model.parameters()).device.type == "cuda", "move the model to GPU before optimizing it"
    assert original_model.training is False, "kernl only supports inference, call model.eval() first"

    forward_original = original_model.forward

    @torchdynamo.optimize(compiler)
    def run(*args, **kwargs):
        return forward_original(*args, **kwargs)

    original_model.forward2 = run
    original_model.forward = run


def warmup(model: torch.nn.Module, tokenizer, max_length: int = 512, batch_sizes=(1, 8, 16)) -> None:
    """Trigger the compilation for the most common shapes, so the first user request is fast."""
    device = next(model.parameters()).device
    for bs in batch_sizes:
        for seq_len in range(16, max_length + 1, 16):
            inputs = {
                "input_ids": torch.ones((bs, seq_len), dtype=torch.int32, device=device),
                "attention_mask": torch.ones((bs, seq_len), dtype=torch.int32, device=device),
            }
            with torch.inference_mode(), torch.cuda.amp.autocast(enabled=True, dtype=torch.float16, cache_enabled=False):
                _ = model(**inputs)
    torch.cuda.synchronize()
    logger.info("warmup done for batch sizes %s and lengths up to %d", batch_sizes, max_length)
