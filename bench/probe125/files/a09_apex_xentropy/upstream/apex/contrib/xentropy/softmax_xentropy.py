import torch
import xentropy_cuda


class SoftmaxCrossEntropyLoss(torch.autograd.Function):
    """Fused softmax + label-smoothed cross entropy.

    Saves only ``max_log_sum_exp`` for backward instead of the full softmax,
    which matters for the 32k-vocabulary output layer of the Transformer
    recipes.  ``half_to_float=True`` returns fp32 losses for fp16 logits.

    Usage::

        from apex.contrib import xentropy
        losses = xentropy.SoftmaxCrossEntropyLoss.apply(
            logits, labels, smoothing, padding_idx, half_to_float)
    """

    @staticmethod
    def forward(ctx, logits, labels, smoothing=0.0, padding_idx=0, half_to_float=False):
        losses, max_log_sum_exp = xentropy_cuda.forward(
            logits, labels, smoothing, half_to_float)
        losses.masked_fill_(labels == padding_idx, 0)

        # smoothing / padding_idx are kept as (host) tensors so that the
        # autograd graph can be pickled by the fairseq checkpoint code
        ctx.save_for_backward(logits, max_log_sum_exp, labels,
                              torch.FloatTensor([smoothing]),
                              torch.LongTensor([padding_idx]))

        return losses

    @staticmethod
    def backward(ctx, grad_loss):
        logits, max_log_sum_exp, labels, smoothing, padding_idx = ctx.saved_tensors

        if not grad_loss.is_contiguous():
            grad_loss = grad_loss.contiguous()
        grad_loss.masked_fill_(labels == padding_idx.item(), 0)
        grad_logits = xentropy_cuda.backward(
            grad_loss.contiguous(), logits, max_log_sum_exp,
            labels, smoothing.item())

        return grad_logits, None, None, None, None


def label_smoothed_xentropy(logits, labels, smoothing=0.1, padding_idx=0, reduce=True):
    """Convenience wrapper used by the translation examples.

    ``logits`` is (tokens, vocab) in fp16, ``labels`` is (tokens,) int64.
    Returns the summed loss (and the number of non-pad tokens) when
    ``reduce`` is set, otherwise the per-token loss vector.
    """
    losses = SoftmaxCrossEntropyLoss.apply(logits, labels, smoothing, padding_idx, True)
    if not reduce:
        return losses
    ntokens = labels.ne(padding_idx).sum()
    return losses.sum(), ntokens
