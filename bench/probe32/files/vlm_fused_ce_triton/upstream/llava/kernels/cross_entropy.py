"""Fused Triton cross-entropy for large-vocabulary VLM fine-tuning.

The LM head of Qwen/InternLM-based VLMs produces (tokens x 150k) logits; materialising
softmax in fp32 for every token dominates activation memory. This kernel computes the
loss row by row and writes the gradient in place into the logits buffer.
Vocabularies above MAX_FUSED_SIZE are processed in chunks and reduced with logsumexp.
"""
import torch
import triton
import triton.language as tl

MAX_FUSED_SIZE = 65536
next_power_of_2 = triton.next_power_of_2


def calculate_settings(n):
    BLOCK_SIZE = next_power_of_2(n)
    if BLOCK_SIZE > MAX_FUSED_SIZE:
        raise RuntimeError(f"Cannot launch Triton kernel since n = {n} exceeds "
                           f"the maximum CUDA blocksize = {MAX_FUSED_SIZE}.")
    num_warps = 4
    if BLOCK_SIZE >= 32768:
        num_warps = 32
    elif BLOCK_SIZE >= 8192:
        num_warps = 16
    elif BLOCK_SIZE >= 2048:
        num_warps = 8
    return BLOCK_SIZE, num_warps


@triton.jit
def _cross_entropy_forward(
    logits_ptr, logits_row_stride,
    loss_ptr,
    logsumexp_ptr,
    labels_ptr,
    VOCAB_SIZE: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    IGNORE_INDEX: tl.constexpr,
):
    """
        loss_i = logsumexp(x_i) - x_i[label_i]
        logsumexp is stored for the backward pass.
    """
    row_idx = tl.program_id(0)
    logits_ptr += row_idx * logits_row_stride.to(tl.int64)
    loss_ptr += row_idx
    logsumexp_ptr += row_idx
    labels_ptr += row_idx

    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < VOCAB_SIZE

    label_idx = tl.load(labels_ptr).to(tl.int32)
    logits = tl.load(logits_ptr + col_offsets, mask=mask, other=-float("inf")).to(tl.float32)
    c = tl.max(logits, 0)
    logsumexp = c + tl.log(tl.sum(tl.exp(logits - c), 0))

    if label_idx != IGNORE_INDEX:
        x = tl.load(logits_ptr + label_idx).to(tl.float32)
        loss = logsumexp - x
    else:
        loss = 0.0
    tl.store(logsumexp_ptr, logsumexp)
    tl.store(loss_ptr, loss)


@triton.jit
def _chunked_cross_entropy_forward(
    logits_ptr, logits_row_stride,
    loss_ptr,
    logsumexp_ptr,
    labels_ptr,
    VOCAB_SIZE: tl.constexpr,
    N_CHUNKS: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    IGNORE_INDEX: tl.constexpr,
):
    """
        Each (row, chunk) program writes a partial logsumexp; the host reduces them
        with torch.logsumexp. Only chunk 0 writes -x[label] into the loss.
    """
    row_idx = tl.program_id(0)
    chunk_idx = tl.program_id(1)
    logits_ptr += row_idx * logits_row_stride.to(tl.int64)
    loss_ptr += row_idx
    logsumexp_ptr += row_idx * N_CHUNKS + chunk_idx
    labels_ptr += row_idx

    col_offsets = chunk_idx * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < VOCAB_SIZE

    label_idx = tl.load(labels_ptr).to(tl.int32)
    logits = tl.load(logits_ptr + col_offsets, mask=mask, other=-float("inf")).to(tl.float32)
    c = tl.max(logits, 0)
    logsumexp = c + tl.log(tl.sum(tl.exp(logits - c), 0))

    if chunk_idx == 0:
        if label_idx != IGNORE_INDEX:
            x = tl.load(logits_ptr + label_idx).to(tl.float32)
            loss = -1.0 * x
        else:
            loss = 0.0
        tl.store(loss_ptr, loss)
    tl.store(logsumexp_ptr, logsumexp)


@triton.jit
def _cross_entropy_backward(
    logits_ptr, logits_row_stride,
    dloss_ptr, dloss_row_stride,
    logsumexp_ptr,
    labels_ptr,
    VOCAB_SIZE: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    IGNORE_INDEX: tl.constexpr,
):
    """
        dC/dx = softmax(x) - 1[x == label], scaled by dloss; written in place.
    """
    row_idx = tl.program_id(0)
    block_idx = tl.program_id(1)

    logits_ptr += row_idx * logits_row_stride.to(tl.int64)
    dloss_ptr += row_idx * dloss_row_stride
    col_offsets = block_idx * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < VOCAB_SIZE
    label_idx = tl.load(labels_ptr + row_idx).to(tl.int32)

    if label_idx != IGNORE_INDEX:
        dloss = tl.load(dloss_ptr)
    else:
        dloss = 0.0

    x = tl.load(logits_ptr + col_offsets, mask=mask, other=-float("inf")).to(tl.float32)
    logsumexp = tl.load(logsumexp_ptr + row_idx)
    y = tl.exp(x - logsumexp)
    y = tl.where(col_offsets == label_idx, y - 1.0, y)
    tl.store(logits_ptr + col_offsets, dloss * y, mask=mask)


class FastCrossEntropyLoss(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, labels, ignore_index=-100):
        n_rows, vocab_size = logits.shape

        div, mod = divmod(vocab_size, MAX_FUSED_SIZE)
        n_chunks = div + (mod != 0)
        losses = torch.empty(n_rows, dtype=torch.float32, device="cuda")

        if n_chunks == 1:
            # For small vocabs <= 65336 like Llama, Mistral
            BLOCK_SIZE, num_warps = calculate_settings(vocab_size)
            logsumexp = torch.empty(n_rows, dtype=torch.float32, device="cuda")

            with torch.cuda.device(logits.device):
                _cross_entropy_forward[(n_rows,)](
                    logits, logits.stride(0),
                    losses,
                    logsumexp,
                    labels,
                    VOCAB_SIZE=vocab_size,
                    BLOCK_SIZE=BLOCK_SIZE,
                    IGNORE_INDEX=ignore_index,
                    num_warps=num_warps,
                )
        else:
            # For large vocabs > 65336 like Qwen, InternLM2
            logsumexp = torch.empty((n_rows, n_chunks), dtype=torch.float32, device="cuda")

            with torch.cuda.device(logits.device):  # chunked path
                _chunked_cross_entropy_forward[(n_rows, n_chunks,)](
                    logits, logits.stride(0),
                    losses,
                    logsumexp,
                    labels,
                    VOCAB_SIZE=vocab_size,
                    N_CHUNKS=n_chunks,
                    BLOCK_SIZE=MAX_FUSED_SIZE,
                    IGNORE_INDEX=ignore_index,
                    num_warps=32,
                )
            # logsumexp(chunked_logsumexp) - x
            # Do the -x separately
            logsumexp = torch.logsumexp(logsumexp, dim=1)  # Row sum
            losses += logsumexp
            losses.masked_fill_(labels == ignore_index, 0)  # Don't forget to mask padding out!

        ctx.save_for_backward(logits, logsumexp, labels)
        ctx.ignore_index = ignore_index
        return losses

    @staticmethod
    def backward(ctx, dlosses):
        logits, logsumexp, labels = ctx.saved_tensors
        n_rows, vocab_size = logits.shape

        BLOCK_SIZE = 4096
        div, mod = divmod(vocab_size, BLOCK_SIZE)
        n_blocks = div + (mod != 0)

        with torch.cuda.device(dlosses.device):
            _cross_entropy_backward[(n_rows, n_blocks,)](
                logits, logits.stride(0),
                dlosses, dlosses.stride(0),
                logsumexp,
                labels,
                VOCAB_SIZE=vocab_size,
                BLOCK_SIZE=BLOCK_SIZE,
                IGNORE_INDEX=ctx.ignore_index,
                num_warps=8,
            )
        return logits, None, None


def fast_cross_entropy_loss(logits, labels, ignore_index=-100):
    """
    Arguments:
        logits: (batch, seq_len, vocab_size)
        labels: (batch, seq_len,)
    Returns:
        losses: float
    """
    batch, seq_len, d = logits.shape
    assert labels.shape == (batch, seq_len)

    loss = FastCrossEntropyLoss.apply(
        logits.view(batch * seq_len, d),
        labels.view(-1),
        ignore_index,
    )
    n_items = torch.count_nonzero(labels != ignore_index)
    return loss.sum() / n_items


def patch_causal_lm_loss(model):
    """Route a HF causal LM's loss through the fused kernel (shift handled here)."""
    original_forward = model.forward

    def forward(*args, labels=None, **kwargs):
        outputs = original_forward(*args, **kwargs)
        if labels is not None:
            logits = outputs.logits[:, :-1, :].contiguous()
            shift_labels = labels[:, 1:].contiguous()
            outputs.loss = fast_cross_entropy_loss(logits, shift_labels)
        return outputs

    model.forward = forward
    return model
