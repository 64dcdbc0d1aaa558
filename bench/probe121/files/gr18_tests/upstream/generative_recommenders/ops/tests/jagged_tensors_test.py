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

import unittest

import torch
from generative_recommenders.common import (
    generate_sparse_seq_len,
    HammerKernel,
    nv_gpu_unavailable,
    set_dev_mode,
)
from hypothesis import given, settings, strategies as st, Verbosity


def _offsets(lengths: torch.Tensor) -> torch.Tensor:
    return torch.ops.fbgemm.asynchronous_complete_cumsum(lengths)


class JaggedTensorsTest(unittest.TestCase):
    def setUp(self) -> None:
        set_dev_mode(True)
        torch.manual_seed(0)

    # pyre-ignore
    @unittest.skipIf(*nv_gpu_unavailable)
    @given(
        batch_size=st.integers(2, 8),
        max_len_left=st.integers(1, 100),
        max_len_right=st.integers(1, 100),
        D=st.integers(20, 200),
        dtype=st.sampled_from(
            [torch.float32, torch.bfloat16]
            if torch.cuda.get_device_capability(torch.device("cuda"))[0] >= 8
            else [torch.float32]
        ),
    )
    @settings(
        verbosity=Verbosity.verbose,
        max_examples=20,
        deadline=None,
    )
    def test_concat_2D_jagged_triton_vs_pytorch(
        self,
        batch_size: int,
        max_len_left: int,
        max_len_right: int,
        D: int,
        dtype: torch.dtype,
    ) -> None:
        from generative_recommenders.ops.jagged_tensors import concat_2D_jagged

        device = torch.device("cuda")
        lengths_left = generate_sparse_seq_len(batch_size, max_len_left, 0.5, device)
        lengths_right = generate_sparse_seq_len(batch_size, max_len_right, 0.5, device)
        offsets_left = _offsets(lengths_left)
        offsets_right = _offsets(lengths_right)
        values_left = torch.randn(
            int(lengths_left.sum().item()), D, device=device, dtype=dtype
        ).requires_grad_()
        values_right = torch.randn(
            int(lengths_right.sum().item()), D, device=device, dtype=dtype
        ).requires_grad_()

        ref = concat_2D_jagged(
            max_seq_len=max_len_left + max_len_right,
            values_left=values_left,
            values_right=values_right,
            max_len_left=max_len_left,
            max_len_right=max_len_right,
            offsets_left=offsets_left,
            offsets_right=offsets_right,
            kernel=HammerKernel.PYTORCH,
        )
        out = concat_2D_jagged(
            max_seq_len=max_len_left + max_len_right,
            values_left=values_left.detach().clone().requires_grad_(),
            values_right=values_right.detach().clone().requires_grad_(),
            max_len_left=max_len_left,
            max_len_right=max_len_right,
            offsets_left=offsets_left,
            offsets_right=offsets_right,
            kernel=HammerKernel.TRITON,
        )
        torch.testing.assert_close(ref, out)

    # pyre-ignore
    @unittest.skipIf(*nv_gpu_unavailable)
    @given(
        batch_size=st.integers(1, 16),
        max_seq_len=st.integers(1, 256),
        K=st.sampled_from([32, 64, 128]),
        N=st.sampled_from([32, 64, 128]),
    )
    @settings(verbosity=Verbosity.verbose, max_examples=20, deadline=None)
    def test_jagged_dense_bmm_broadcast_add_triton_vs_pytorch(
        self, batch_size: int, max_seq_len: int, K: int, N: int
    ) -> None:
        from generative_recommenders.ops.jagged_tensors import (
            jagged_dense_bmm_broadcast_add,
        )

        device = torch.device("cuda")
        lengths = generate_sparse_seq_len(batch_size, max_seq_len, 0.7, device)
        seq_offsets = _offsets(lengths)
        L = int(seq_offsets[-1].item())
        jagged = torch.randn(L, K, device=device)
        dense = torch.randn(batch_size, K, N, device=device)
        bias = torch.randn(batch_size, N, device=device)
        ref = jagged_dense_bmm_broadcast_add(
            max_seq_len, seq_offsets, jagged, dense, bias, kernel=HammerKernel.PYTORCH
        )
        out = jagged_dense_bmm_broadcast_add(
            max_seq_len, seq_offsets, jagged, dense, bias, kernel=HammerKernel.TRITON
        )
        torch.testing.assert_close(ref, out, atol=1e-3, rtol=1e-3)


class JaggedTensorsDeviceVsCpuTest(unittest.TestCase):
    """PYTORCH kernels on the accelerator must match the same code on CPU."""

    @unittest.skipIf(not torch.cuda.is_available(), "requires a GPU")
    def test_concat_split_roundtrip_device_vs_cpu(self) -> None:
        from generative_recommenders.ops.jagged_tensors import (
            concat_2D_jagged,
            split_2D_jagged,
        )

        torch.manual_seed(7)
        B, D = 6, 48
        lengths_left = torch.randint(0, 20, (B,))
        lengths_right = torch.randint(1, 10, (B,))
        values_left = torch.randn(int(lengths_left.sum()), D)
        values_right = torch.randn(int(lengths_right.sum()), D)

        results = {}
        for dev in ["cpu", "cuda"]:
            vl, vr = values_left.to(dev), values_right.to(dev)
            ol, orr = _offsets(lengths_left.to(dev)), _offsets(lengths_right.to(dev))
            cat = concat_2D_jagged(
                max_seq_len=30,
                values_left=vl,
                values_right=vr,
                max_len_left=None,
                max_len_right=None,
                offsets_left=ol,
                offsets_right=orr,
                kernel=HammerKernel.PYTORCH,
            )
            left, right = split_2D_jagged(
                max_seq_len=30,
                values=cat,
                total_len_left=None,
                total_len_right=None,
                max_len_left=None,
                max_len_right=None,
                offsets_left=ol,
                offsets_right=orr,
                kernel=HammerKernel.PYTORCH,
            )
            results[dev] = (cat.cpu(), left.cpu(), right.cpu())

        for a, b in zip(results["cpu"], results["cuda"]):
            torch.testing.assert_close(a, b)
        torch.testing.assert_close(results["cpu"][1], values_left)
        torch.testing.assert_close(results["cpu"][2], values_right)


if __name__ == "__main__":
    unittest.main()
