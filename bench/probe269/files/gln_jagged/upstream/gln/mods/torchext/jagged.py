from __future__ import print_function
from __future__ import absolute_import
from __future__ import division

import torch
from torch.autograd import Function
from torch.nn import Module

import extlib
try:
    import extlib_cuda
except ImportError:
    print('not loading cuda jagged ops')


class JaggedLogSoftmaxFunc(Function):
    """log-softmax over variable-length segments of a flat score vector.

    ``prefix_sum`` holds the (inclusive) cumulative segment lengths, e.g. the
    number of candidate templates / reactions proposed for each product in
    the batch.
    """

    @staticmethod
    def forward(ctx, logits, prefix_sum):
        assert len(prefix_sum.size()) == 1
        if not logits.is_cuda:
            output = extlib.jagged_log_softmax_forward(logits, prefix_sum)
        else:
            output = extlib_cuda.jagged_log_softmax_forward_cuda(logits, prefix_sum)

        ctx.save_for_backward(prefix_sum, output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        prefix_sum, output = ctx.saved_variables
        if not grad_output.is_cuda:
            grad_input = extlib.jagged_log_softmax_backward(output.data, grad_output, prefix_sum.data)
        else:
            grad_input = extlib_cuda.jagged_log_softmax_backward_cuda(output.data, grad_output, prefix_sum.data)
        return grad_input, None


def jagged_log_softmax(logits, prefix_sum):
    return JaggedLogSoftmaxFunc.apply(logits, prefix_sum)


class JaggedLogSoftmax(Module):
    def forward(self, logits, prefix_sum):
        return jagged_log_softmax(logits, prefix_sum)


class JaggedArgmax(Module):
    """Index of the best candidate inside each segment (used for greedy eval)."""

    def forward(self, values, prefix_sum):
        assert len(prefix_sum.size()) == 1
        if not values.is_cuda:
            return extlib.jagged_argmax_forward(values, prefix_sum)
        else:
            return extlib_cuda.jagged_argmax_forward_cuda(values, prefix_sum)


class JaggedTopK(object):
    """Top-k inside each segment; pure torch, runs wherever ``values`` lives."""

    def __call__(self, values, prefix_sum, k):
        outs, idxs = [], []
        start = 0
        for end in prefix_sum.tolist():
            seg = values[start:end]
            kk = min(k, seg.shape[0])
            v, i = torch.topk(seg, kk)
            outs.append(v)
            idxs.append(i + start)
            start = end
        return outs, idxs


jagged_argmax = JaggedArgmax()
jagged_topk = JaggedTopK()
