"""Apply a packed token bitmask to logits in place (grammar-constrained SQL decoding).

The SQL grammar matcher produces, for every sequence in the batch, an int32 bitmask of shape
(batch, ceil(vocab / 32)) where bit j of word i says whether token 32*i + j is allowed next.
Disallowed logits are set to -inf.

Three implementations:
  * Triton kernel (GPU, persistent grid over the batch x vocab blocks)  -- default off-CPU
  * torch.compile'd reference (any device)
  * C++ kernel from sqlgrammar._C (CPU)
"""
from typing import List, Optional, Union

import torch

try:
    import triton
    import triton.language as tl

    HAS_TRITON = True
except ImportError:  # CPU-only installs
    HAS_TRITON = False

BITS_PER_BLOCK = 32


if HAS_TRITON:

    @triton.jit
    def apply_token_bitmask_inplace_kernel(
        logits_ptr,
        bitmask_ptr,
        indices_ptr,
        num_rows,
        vocab_size,
        logits_strides,
        bitmask_strides,
        NUM_SMS: tl.constexpr,
        BLOCK_SIZE: tl.constexpr,
    ):
        """Persistent kernel: each program walks over (row, vocab block) work items with stride NUM_SMS."""
        pid = tl.program_id(0)
        num_blocks = tl.cdiv(vocab_size, BLOCK_SIZE)
        for work_id in tl.range(pid, num_rows * num_blocks, NUM_SMS):
            row_id = work_id // num_blocks
            block_offset = (work_id % num_blocks) * BLOCK_SIZE
            batch_id = row_id if indices_ptr is None else tl.load(indices_ptr + row_id)
            offsets = block_offset + tl.arange(0, BLOCK_SIZE)
            bitmask_offsets = block_offset // 32 + tl.arange(0, BLOCK_SIZE // 32)
            vocab_mask = offsets < vocab_size
            packed_bitmask_mask = bitmask_offsets < bitmask_strides
            packed_bitmask = tl.load(
                bitmask_ptr + batch_id * bitmask_strides + bitmask_offsets, packed_bitmask_mask
            )
            bitmask = ((packed_bitmask[:, None] >> (tl.arange(0, 32)[None, :])) & 1) == 0
            bitmask = bitmask.reshape(BLOCK_SIZE)

            tl.store(logits_ptr + batch_id * logits_strides + offsets, -float("inf"), vocab_mask & bitmask)


def apply_token_bitmask_inplace_triton(
    logits: torch.Tensor,
    bitmask: torch.Tensor,
    vocab_size: Optional[int] = None,
    indices: Optional[Union[List[int], torch.Tensor]] = None,
):
    NUM_SMS = torch.cuda.get_device_properties("cuda").multi_processor_count
    BLOCK_SIZE = 4096

    assert bitmask.dtype == torch.int32, "bitmask must be of type int32"

    # Check input tensor shapes.
    logits_shape = logits.shape
    bitmask_shape = bitmask.shape
    if logits.ndim == 1:
        logits_shape = (1, logits_shape[0])
    if bitmask.ndim == 1:
        bitmask_shape = (1, bitmask_shape[0])

    required_bitmask_width = (logits_shape[1] + 31) // 32
    assert required_bitmask_width >= bitmask_shape[1], (
        f"Bitmask width too large: allow at most {required_bitmask_width} int32s for "
        f"logits' width {logits_shape[1]}, but got {bitmask_shape[1]}"
    )

    vocab_size = min(logits_shape[1], bitmask_shape[1] * 32) if vocab_size is None else vocab_size

    num_rows = None
    if isinstance(indices, list) or isinstance(indices, torch.Tensor):
        indices = torch.tensor(indices, dtype=torch.int32, device=logits.device)
        num_rows = indices.shape[0]
    else:
        assert logits_shape[0] == bitmask_shape[0], (
            f"batch size mismatch: logits {logits_shape[0]} vs bitmask {bitmask_shape[0]}"
        )
        num_rows = logits_shape[0]

    grid = (NUM_SMS,)

    apply_token_bitmask_inplace_kernel[grid](
        logits,
        bitmask,
        indices,
        num_rows,
        vocab_size,
        logits_shape[1],
        bitmask_shape[1],
        NUM_SMS,
        BLOCK_SIZE,
        num_warps=BLOCK_SIZE // 32 // (16 // logits.element_size()),
        num_stages=3,
    )


@torch.compile(dynamic=True)
def _apply_token_bitmask_inplace_compiled(logits: torch.Tensor, bitmask: torch.Tensor, vocab_size: int):
    bits = torch.arange(32, device=bitmask.device, dtype=torch.int32)
    unpacked = ((bitmask.unsqueeze(-1) >> bits) & 1).bool().flatten(-2)[..., :vocab_size]
    logits[..., :vocab_size].masked_fill_(~unpacked, float("-inf"))


def apply_token_bitmask_inplace_torch(
    logits: torch.Tensor,
    bitmask: torch.Tensor,
    vocab_size: Optional[int] = None,
    indices: Optional[List[int]] = None,
):
    vocab_size = min(logits.shape[-1], bitmask.shape[-1] * 32) if vocab_size is None else vocab_size
    if indices is None:
        _apply_token_bitmask_inplace_compiled(logits, bitmask, vocab_size)
    else:
        idx = torch.as_tensor(indices, device=logits.device, dtype=torch.long)
        sub = logits.index_select(0, idx)
        _apply_token_bitmask_inplace_compiled(sub, bitmask.index_select(0, idx), vocab_size)
        logits.index_copy_(0, idx, sub)


def apply_token_bitmask_inplace(
    logits: torch.Tensor,
    bitmask: torch.Tensor,
    vocab_size: Optional[int] = None,
    indices: Optional[List[int]] = None,
):
    """Dispatch on the device of `logits`."""
    if HAS_TRITON and logits.device.type != "cpu":
        apply_token_bitmask_inplace_triton(logits, bitmask, vocab_size, indices)
    elif logits.device.type == "cpu":
        from sqlgrammar import _C

        _C.apply_token_bitmask_inplace_cpu(logits, bitmask, vocab_size or -1, indices)
    else:
        apply_token_bitmask_inplace_torch(logits, bitmask, vocab_size, indices)


def allocate_token_bitmask(batch_size: int, vocab_size: int) -> torch.Tensor:
    """All-ones (everything allowed) host bitmask; the matcher clears bits in place."""
    return torch.full((batch_size, (vocab_size + 31) // 32), -1, dtype=torch.int32)
