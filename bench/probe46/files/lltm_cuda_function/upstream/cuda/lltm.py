"""LLTM cell backed by the lltm_cuda extension.

The extension is normally installed with ``python setup.py install``; when it is not
importable (e.g. running from a source checkout) it is JIT-compiled on first use with
torch.utils.cpp_extension.load, exactly like jit.py does.
"""
import math
import os

import torch
from torch import nn
from torch.autograd import Function

try:
    import lltm_cuda
except ImportError:
    from torch.utils.cpp_extension import load

    _here = os.path.dirname(os.path.abspath(__file__))
    lltm_cuda = load(
        name="lltm_cuda",
        sources=[os.path.join(_here, "lltm_cuda.cpp"), os.path.join(_here, "lltm_cuda_kernel.cu")],
        extra_cuda_cflags=["-O3", "--use_fast_math"],
        verbose=True,
    )

torch.manual_seed(42)


def _check_inputs(*tensors):
    for t in tensors:
        if not t.is_cuda:
            raise ValueError("lltm_cuda expects CUDA tensors, got a tensor on %s" % t.device)
        if not t.is_contiguous():
            raise ValueError("lltm_cuda expects contiguous tensors")


class LLTMFunction(Function):
    @staticmethod
    def forward(ctx, input, weights, bias, old_h, old_cell):
        _check_inputs(input, weights, bias, old_h, old_cell)
        outputs = lltm_cuda.forward(input, weights, bias, old_h, old_cell)
        new_h, new_cell = outputs[:2]
        variables = outputs[1:] + [weights]
        ctx.save_for_backward(*variables)

        return new_h, new_cell

    @staticmethod
    def backward(ctx, grad_h, grad_cell):
        outputs = lltm_cuda.backward(
            grad_h.contiguous(), grad_cell.contiguous(), *ctx.saved_tensors)
        d_old_h, d_input, d_weights, d_bias, d_old_cell, d_gates = outputs
        return d_input, d_weights, d_bias, d_old_h, d_old_cell


class LLTM(nn.Module):
    def __init__(self, input_features, state_size):
        super(LLTM, self).__init__()
        self.input_features = input_features
        self.state_size = state_size
        self.weights = nn.Parameter(
            torch.empty(3 * state_size, input_features + state_size))
        self.bias = nn.Parameter(torch.empty(1, 3 * state_size))
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.state_size)
        for weight in self.parameters():
            weight.data.uniform_(-stdv, +stdv)

    def forward(self, input, state):
        return LLTMFunction.apply(input, self.weights, self.bias, *state)


def lltm_reference(input, weights, bias, old_h, old_cell):
    """Pure-PyTorch reference used by check.py / grad_check.py."""
    X = torch.cat([old_h, input], dim=1)
    gate_weights = torch.nn.functional.linear(X, weights, bias)
    gates = gate_weights.chunk(3, dim=1)
    input_gate = torch.sigmoid(gates[0])
    output_gate = torch.sigmoid(gates[1])
    candidate_cell = torch.nn.functional.elu(gates[2])
    new_cell = old_cell + candidate_cell * input_gate
    new_h = torch.tanh(new_cell) * output_gate
    return new_h, new_cell


if __name__ == "__main__":
    batch_size, input_features, state_size = 16, 32, 128
    device = torch.device("cuda")
    X = torch.randn(batch_size, input_features, device=device)
    h = torch.randn(batch_size, state_size, device=device)
    C = torch.randn(batch_size, state_size, device=device)
    rnn = LLTM(input_features, state_size).to(device)
    new_h, new_C = rnn(X, (h, C))
    ref_h, ref_C = lltm_reference(X, rnn.weights, rnn.bias, h, C)
    print("max |h - ref|:", (new_h - ref_h).abs().max().item())
    print("max |C - ref|:", (new_C - ref_C).abs().max().item())
