# Copyright (c) 2021 NVIDIA CORPORATION. All rights reserved.
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
"""Feature interaction layers for DLRM.

``cuda_dot`` uses the hand-written dot-based interaction kernels from ``dlrm.cuda_ext``
(built by setup.py): one kernel for Volta (sm_70, WMMA fp16) and one for Ampere (sm_80,
also tf32). ``dot`` is the reference implementation with torch.bmm, ``cat`` just concatenates.
"""
from typing import List, Sequence

import torch
from torch.autograd import Function

DEFAULT_INTERACTION_OP = "cuda_dot"


def _load_interaction_ext():
    """Pick the interaction extension that matches the current GPU architecture."""
    major, _ = torch.cuda.get_device_capability()
    if major >= 8:
        from dlrm.cuda_ext import interaction_ampere as ext
    else:
        from dlrm.cuda_ext import interaction_volta as ext
    return ext


class DotBasedInteract(Function):
    """Autograd wrapper around the fused CUDA kernels (input is [B, F, D] fp16)."""

    ext = None

    @staticmethod
    @torch.cuda.amp.custom_fwd(cast_inputs=torch.half)
    def forward(ctx, input, bottom_mlp_output):
        output = DotBasedInteract.ext.dotBasedInteractFwd(input, bottom_mlp_output)
        ctx.save_for_backward(input)
        return output

    @staticmethod
    @torch.cuda.amp.custom_bwd
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        grad, mlp_grad = DotBasedInteract.ext.dotBasedInteractBwd(input, grad_output)
        return grad, mlp_grad


def dot_based_interact(input, bottom_mlp_output):
    if DotBasedInteract.ext is None:
        DotBasedInteract.ext = _load_interaction_ext()
    return DotBasedInteract.apply(input, bottom_mlp_output)


class Interaction:
    @property
    def num_interactions(self) -> int:
        raise NotImplementedError()

    def interact(self, bottom_output, bottom_mlp_output):
        """
        :param bottom_output: [batch_size, 1 + #embeddings, embedding_dim]
        :param bottom_mlp_output
        :return:
        """
        raise NotImplementedError()


class DotInteraction(Interaction):
    def __init__(self, embedding_num: int, embedding_dim: int):
        """
        Interactions are among outputs of all the embedding tables and bottom MLP, total number of
        (num_embedding_tables + 1) vectors with size embedding_dim. ``dot`` product interaction computes dot product
        between any 2 vectors. Output of interaction will have shape [num_interactions, embedding_dim].
        """
        self._num_interaction_inputs = embedding_num + 1
        self._embedding_dim = embedding_dim
        self._tril_indices = torch.tensor(
            [[i for i in range(self._num_interaction_inputs) for _ in range(i)],
             [j for i in range(self._num_interaction_inputs) for j in range(i)]]
        )

    @property
    def num_interactions(self) -> int:
        n = (self._num_interaction_inputs * (self._num_interaction_inputs - 1)) // 2 + self._embedding_dim
        return n + 1  # pad 1 to be multiple of 8 for tensor cores

    def interact(self, bottom_output, bottom_mlp_output):
        batch_size = bottom_output.size()[0]
        interaction = torch.bmm(bottom_output, torch.transpose(bottom_output, 1, 2))
        tril_indices = self._tril_indices.to(interaction.device)
        interaction_flat = interaction[:, tril_indices[0], tril_indices[1]]
        # concatenate dense features and interactions
        zeros_padding = torch.zeros(batch_size, 1, dtype=bottom_output.dtype, device=bottom_output.device)
        interaction_output = torch.cat((bottom_mlp_output, interaction_flat, zeros_padding), dim=1)
        return interaction_output


class CudaDotInteraction(Interaction):
    def __init__(self, dot_interaction: DotInteraction):
        self._dot_interaction = dot_interaction

    @property
    def num_interactions(self):
        return self._dot_interaction.num_interactions

    def interact(self, bottom_output, bottom_mlp_output):
        return dot_based_interact(bottom_output, bottom_mlp_output)


class CatInteraction(Interaction):
    def __init__(self, embedding_num: int, embedding_dim: int):
        self._num_interaction_inputs = embedding_num + 1
        self._embedding_dim = embedding_dim

    @property
    def num_interactions(self) -> int:
        return self._num_interaction_inputs * self._embedding_dim

    def interact(self, bottom_output, bottom_mlp_output):
        return bottom_output.view(-1, self.num_interactions)


def create_interaction(interaction_type: str, embedding_num: int, embedding_dim: int) -> Interaction:
    if interaction_type == "dot":
        return DotInteraction(embedding_num, embedding_dim)
    if interaction_type == "cuda_dot":
        return CudaDotInteraction(DotInteraction(embedding_num, embedding_dim))
    if interaction_type == "cat":
        return CatInteraction(embedding_num, embedding_dim)
    raise NotImplementedError(f"unknown interaction {interaction_type}")


def pad_embedding_dims(dims: Sequence[int], multiple: int = 8) -> List[int]:
    """Round embedding sizes up so the fp16 tensor-core kernels can be used."""
    return [((d + multiple - 1) // multiple) * multiple for d in dims]
