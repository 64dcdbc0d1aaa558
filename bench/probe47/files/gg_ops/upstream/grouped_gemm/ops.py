"""Python front-end of the grouped GEMM / MoE permutation extension.

`gmm(a, b, batch_sizes)` multiplies consecutive row-blocks of `a` (one block per
expert, sizes given by `batch_sizes`) by the matching matrix in `b` with one
CUTLASS grouped-GEMM launch. `permute` / `unpermute` reorder tokens into expert
order and back, and `sinkhorn` balances router scores.
"""
import warnings

import torch

# NOTE: Torch needs to be imported before the custom
# extensions. Otherwise libc10.so cannot be found.
import grouped_gemm_backend as backend


# 1. grouped GEMM --------------------------------------------------------------


def _allocate_output(a, b, batch_sizes, trans_a, trans_b):
    assert not (trans_a and trans_b)
    assert batch_sizes.ndim == 1, "Expected 1d tensor for batch_sizes"
    assert a.ndim == 2, "Expected 2d tensor for 'a'"
    assert b.ndim == (2 if trans_a else 3)

    shape = ((batch_sizes.shape[0], a.shape[1], b.shape[1]) if trans_a else (a.shape[0], (b.shape[1] if trans_b else b.shape[2])))
    return torch.empty(*shape, device=a.device, dtype=a.dtype)


def gmm_backend(a, b, batch_sizes, trans_a=False, trans_b=False, c=None):
    if batch_sizes.device.type != "cpu":
        warnings.warn("grouped_gemm: batch_sizes should live on the host; copying it back")
        batch_sizes = batch_sizes.cpu()
    if c is None:
        c = _allocate_output(a, b, batch_sizes, trans_a, trans_b)
    backend.gmm(a, b, c, batch_sizes, trans_a, trans_b)
    return c


class GroupedGemm(torch.autograd.Function):

    @staticmethod
    def forward(ctx, a, b, batch_sizes, trans_b):
        ctx.save_for_backward(a, b, batch_sizes)
        ctx.trans_b = trans_b
        return gmm_backend(a, b, batch_sizes, trans_a=False, trans_b=trans_b)

    @staticmethod
    def backward(ctx, grad):
        grad = grad.contiguous()
        a, b, batch_sizes = ctx.saved_tensors
        trans_b = ctx.trans_b

        agrad = None
        if ctx.needs_input_grad[0]:
            agrad = gmm_backend(grad, b, batch_sizes, trans_a=False, trans_b=not trans_b)

        bgrad = None
        if ctx.needs_input_grad[1]:
            lhs, rhs = (grad, a) if trans_b else (a, grad)
            bgrad = gmm_backend(lhs, rhs, batch_sizes, trans_a=True, trans_b=False)
        return agrad, bgrad, None, None


def gmm(a, b, batch_sizes, trans_b=False):
    return GroupedGemm.apply(a, b, batch_sizes, trans_b)


# 2. token permutation ---------------------------------------------------------

# The permute kernel keeps a small device workspace alive between calls so the
# radix-sort scratch space is not re-allocated every step.
_workspace = []
_max_expanded_token_num = 0


class PermuteMoE(torch.autograd.Function):

    @staticmethod
    def forward(ctx, unpermuted_inputs: torch.Tensor, indices: torch.Tensor, num_out_tokens: int, max_token_num: int):
        global _workspace, _max_expanded_token_num

        # Empty input check
        if not unpermuted_inputs.numel():
            return unpermuted_inputs, None

        # Device check
        if unpermuted_inputs.is_cpu:
            raise RuntimeError("[Error] The input `unpermuted_inputs` of permute_topK op is on the device: CPU!")
        if indices.is_cpu:
            warnings.warn("The input `indices` of permute_topK op is on the device: CPU!")
            indices = indices.cuda()

        # Shape check
        if unpermuted_inputs.size(0) != indices.size(0):
            raise RuntimeError(f"[Error] permute_topK op input `indices` shape mismatch! "
                               f"Expect {unpermuted_inputs.size(0)}, but got {indices.size(0)}.")

        # Data type check
        if indices.dtype != torch.int32:
            warnings.warn(f"The data type of the input `indices` of permute_topK op is {indices.dtype}! "
                          "The recommended type is torch.int32.")
            indices = indices.to(torch.int32)

        num_topK = indices.size(1)
        input_max_expanded_token_num = max(max_token_num, unpermuted_inputs.size(0)) * num_topK
        if _max_expanded_token_num < input_max_expanded_token_num:
            _max_expanded_token_num = input_max_expanded_token_num
            _workspace = [torch.empty(0, dtype=torch.int32, device=torch.cuda.current_device())]

        permuted_inputs, row_id_map, _workspace = backend.permute(unpermuted_inputs, indices, num_out_tokens, _workspace, _max_expanded_token_num)

        ctx.row_id_map = row_id_map
        ctx.num_tokens = indices.size(0)
        ctx.num_topK = num_topK
        return permuted_inputs, row_id_map

    @staticmethod
    def backward(ctx, permuted_inputs_grad, _):
        # Empty input check
        if not permuted_inputs_grad.numel():
            return permuted_inputs_grad, None, None, None

        permuted_inputs_grad = permuted_inputs_grad.contiguous()
        row_id_map = ctx.row_id_map
        num_tokens = ctx.num_tokens
        num_topK = ctx.num_topK

        unpermuted_inputs_grad = backend.unpermute(permuted_inputs_grad, row_id_map, torch.tensor([]), num_tokens, num_topK)
        return unpermuted_inputs_grad, None, None, None


class UnpermuteMoE(torch.autograd.Function):

    @staticmethod
    def forward(ctx, permuted_inputs: torch.Tensor, row_id_map: torch.Tensor, probs: torch.Tensor):
        # Empty input check
        if not permuted_inputs.numel():
            ctx.probs = probs
            return permuted_inputs

        if probs.dtype != torch.float32:
            warnings.warn(f"The data type of the input `probs` of unpermute_topK op is {probs.dtype}! "
                          "The recommended type is torch.float32.")
            probs = probs.to(torch.float32)

        num_tokens = probs.size(0)
        num_topK = probs.size(1)

        unpermuted_output = backend.unpermute(permuted_inputs, row_id_map, probs, num_tokens, num_topK)

        ctx.save_for_backward(permuted_inputs, row_id_map, probs)
        return unpermuted_output

    @staticmethod
    def backward(ctx, unpermuted_inputs_grad):
        # Empty input check
        if not unpermuted_inputs_grad.numel():
            return unpermuted_inputs_grad, None, ctx.probs

        unpermuted_inputs_grad = unpermuted_inputs_grad.contiguous()
        permuted_inputs, row_id_map, probs = ctx.saved_tensors

        act_grad = None
        if ctx.needs_input_grad[0]:
            act_grad, prob_grad = backend.unpermute_bwd(unpermuted_inputs_grad, permuted_inputs, row_id_map, probs)

        if not ctx.needs_input_grad[2]:
            prob_grad = None
        return act_grad, None, prob_grad


def permute(unpermuted_inputs, indices, num_out_tokens=0, max_token_num=0):
    return PermuteMoE.apply(unpermuted_inputs, indices, num_out_tokens, max_token_num)


def unpermute(permuted_inputs, row_id_map, probs):
    return UnpermuteMoE.apply(permuted_inputs, row_id_map, probs)


# 3. sinkhorn ------------------------------------------------------------------


def sinkhorn(cost: torch.Tensor, tol: float = 0.0001):
    return backend.sinkhorn(cost, tol)


def sinkhorn_reference(cost: torch.Tensor, tol: float = 0.0001):
    """Reference implementation kept for the unit tests."""
    cost = torch.exp(cost)
    d0 = torch.ones(cost.size(0), device=cost.device, dtype=cost.dtype)
    d1 = torch.ones(cost.size(1), device=cost.device, dtype=cost.dtype)

    eps = 0.00000001
    error = 1e9
    d1_old = d1
    while error > tol:
        d0 = (1 / d0.size(0)) * 1 / (torch.sum(d1 * cost, 1) + eps)
        d1 = (1 / d1.size(0)) * 1 / (torch.sum(d0.unsqueeze(1) * cost, 0) + eps)
        error = torch.mean(torch.abs(d1_old - d1))
        d1_old = d1
    return d1 * cost * d0.unsqueeze(1)
