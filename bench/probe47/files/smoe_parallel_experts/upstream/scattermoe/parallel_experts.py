"""Expert-parallel linear layers built on the scatter2scatter kernels."""
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from . import kernels


@torch.library.custom_op("scattermoe::bincount", mutates_args={})
def compileable_bincount(x: torch.Tensor, minlength: int) -> torch.Tensor:
    return x.bincount(minlength=minlength)


@compileable_bincount.register_fake
def _(x: torch.Tensor, minlength: int) -> torch.Tensor:
    return torch.empty(minlength, dtype=torch.long, device=x.device)


@torch.compile
def flatten_sort_count(expert_idxs: torch.Tensor, num_experts: int):
    with torch.no_grad():
        flattened_expert_idxs = expert_idxs.flatten()
        sorted_expert_idxs, sorted_scattered_idxs = torch.sort(flattened_expert_idxs)
        expert_counts = compileable_bincount(flattened_expert_idxs, minlength=num_experts)
        expert_offsets = expert_counts.cumsum(-1)
        return sorted_expert_idxs, sorted_scattered_idxs, expert_offsets


class ParallelLinear(torch.autograd.Function):

    @staticmethod
    @torch.amp.custom_fwd(device_type="cuda")
    def forward(ctx, x, expert_weights, k, sorted_expert_idxs, sorted_scattered_idxs, padded_block_idxs, expert_offsets,
                gates=None, grouped_in=False, grouped_out=False):
        output = kernels.ops.scatter2scatter(
            X=x, W=expert_weights,
            sorted_expert_idxs=sorted_expert_idxs,
            sorted_scattered_idxs=sorted_scattered_idxs,
            padded_block_idxs=padded_block_idxs,
            k=k, x_grouped=grouped_in, y_grouped=grouped_out,
        )
        if gates is not None:
            output_expanded = output.view(gates.size(0), gates.size(1), output.size(-1))
            output = torch.bmm(gates[:, None, :], output_expanded).squeeze(1)
        else:
            output_expanded = None

        ctx.save_for_backward(
            x, expert_weights,
            sorted_expert_idxs, sorted_scattered_idxs,
            padded_block_idxs, expert_offsets,
            gates,
            output_expanded,
        )
        ctx.grouped_in = grouped_in
        ctx.grouped_out = grouped_out
        ctx.k = k
        return output

    @staticmethod
    @torch.amp.custom_bwd(device_type="cuda")
    def backward(ctx, grad_out):
        (x, expert_weights,
         sorted_expert_idxs, sorted_scattered_idxs,
         padded_block_idxs, expert_offsets,
         gates, output_expanded) = ctx.saved_tensors
        k = ctx.k
        grouped_in = ctx.grouped_in
        grouped_out = ctx.grouped_out

        if gates is not None:
            # calculate gates gradient
            d_gates = torch.bmm(output_expanded, grad_out[:, :, None]).squeeze(-1)
            gates_flat = gates.flatten()
            gate_fan = gates.size(1)
            grouped_grad_out = output_expanded.flatten(0, 1)  # reuse expanded buffer later
        else:
            d_gates = None
            gates_flat = None
            gate_fan = 1
            grouped_grad_out = None

        if grouped_out:
            grouped_grad_out = grad_out
        else:
            grouped_grad_out = kernels.ops.group(grad_out, sorted_scattered_idxs, fan_out=gate_fan, coeff=gates_flat, out=grouped_grad_out)
        if grouped_in:
            grouped_x = x
            d_expanded_input = None
        else:
            grouped_x = kernels.ops.group(x, sorted_scattered_idxs, fan_out=k)
            d_expanded_input = grouped_x

        d_weights = kernels.ops.group_bwd_W(DY=grouped_grad_out, X=grouped_x, expert_offsets=expert_offsets, E=expert_weights.size(0))

        d_expanded_input = kernels.ops.scatter2scatter(
            X=grouped_grad_out, x_grouped=True,
            W=expert_weights.permute(0, 2, 1),
            padded_block_idxs=padded_block_idxs,
            sorted_expert_idxs=sorted_expert_idxs,
            sorted_scattered_idxs=sorted_scattered_idxs,
            k=1,
            y_grouped=grouped_in,
            out=d_expanded_input,  # Reuse grouped_x buffer
        )

        if k == 1:
            d_input = d_expanded_input
        else:
            d_input = d_expanded_input.view(x.size(0), k, d_expanded_input.size(-1)).sum(-2)
        return (
            # x, expert_weights, k,
            d_input, d_weights, None,
            # sorted_expert_idxs, sorted_scattered_idxs,
            None, None,
            # padded_block_idxs, expert_offsets,
            None, None,
            # gates
            d_gates, None, None,
        )


def parallel_linear(inputs, expert_weights, k, sorted_expert_idxs, sorted_scattered_idxs, padded_block_idxs, expert_offsets,
                    gates=None, grouped_in=False, grouped_out=False):
    results = ParallelLinear.apply(inputs, expert_weights, k, sorted_expert_idxs, sorted_scattered_idxs, padded_block_idxs,
                                   expert_offsets, gates, grouped_in, grouped_out)
    return results


class ParallelExperts(nn.Module):

    def __init__(self, num_experts, input_size, output_size) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(num_experts, output_size, input_size))
        self.num_experts = num_experts
        self.input_size = input_size
        self.output_size = output_size
        self.reset_parameters()

    def extra_repr(self):
        return "num_experts={}, input_size={}, output_size={}".format(self.num_experts, self.input_size, self.output_size)

    def reset_parameters(self) -> None:
        nn.init.normal_(self.weight, std=0.02)

    def forward(self, inputs, k, sorted_expert_idxs, sorted_scattered_idxs, padded_block_idxs, expert_offsets,
                gates=None, grouped_in=False, grouped_out=False):
        results = parallel_linear(
            inputs, self.weight.permute(0, 2, 1), k,
            sorted_expert_idxs, sorted_scattered_idxs, padded_block_idxs, expert_offsets,
            gates=gates, grouped_in=grouped_in, grouped_out=grouped_out,
        )
        return results


class MLP(nn.Module):

    def __init__(self, input_size, hidden_size, num_experts, top_k, bias=False, activation=None):
        super(MLP, self).__init__()

        self.num_experts = num_experts
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.experts = ParallelExperts(num_experts, input_size, hidden_size)
        self.output_experts = ParallelExperts(num_experts, hidden_size, input_size)
        self.top_k = min(top_k, self.num_experts)
        self.activation = activation

    def forward(self, x: torch.Tensor, expert_p: torch.Tensor, expert_idxs: torch.Tensor):
        x_shape = x.size()
        x = x.view(-1, x_shape[-1])
        sorted_expert_idxs, sorted_scattered_idxs, expert_offsets = flatten_sort_count(expert_idxs, num_experts=self.num_experts)
        padded_block_idxs, _ = kernels.ops.padded_block_indices(sorted_expert_idxs, self.num_experts)

        h = self.experts(x, self.top_k, sorted_expert_idxs, sorted_scattered_idxs, padded_block_idxs, expert_offsets, grouped_out=True)
        h = self.activation(h)
        y = self.output_experts(h, 1, sorted_expert_idxs, sorted_scattered_idxs, padded_block_idxs, expert_offsets,
                                grouped_in=True, gates=expert_p)
        y = y.view(*x_shape[:-1], y.size(-1))
        return y


def _smoke_test(tokens=4096, dim=1024, hidden=2816, experts=8, top_k=2, steps=20):
    """python -m scattermoe.parallel_experts: quick forward/backward timing."""
    device = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = True
    mlp = MLP(dim, hidden, experts, top_k, activation=F.silu).to(device=device, dtype=torch.bfloat16)
    x = torch.randn(tokens, dim, device=device, dtype=torch.bfloat16, requires_grad=True)
    logits = torch.randn(tokens, experts, device=device)
    p, idx = torch.topk(logits.softmax(-1), top_k, dim=-1)
    for _ in range(3):
        mlp(x, p.to(x.dtype), idx).sum().backward()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(steps):
        mlp(x, p.to(x.dtype), idx).sum().backward()
    torch.cuda.synchronize()  # end of timed region
    print(f"fwd+bwd: {(time.perf_counter() - t0) / steps * 1e3:.2f} ms/step")


if __name__ == "__main__":
    _smoke_test()
