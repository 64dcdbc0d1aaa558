# Expert-parallel MoE layer: top-k routing, token permutation, all-to-all dispatch and grouped GEMM
# experts. Modelled on the megablocks / tutel / grouped_gemm stack used for Mixtral-style training.
import math
from typing import Optional, Tuple

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

import grouped_gemm as gg
from megablocks import ops as mb_ops


class _AllToAll(torch.autograd.Function):
    @staticmethod
    def forward(ctx, group, x, output_split_sizes, input_split_sizes):
        ctx.group = group
        ctx.output_split_sizes = output_split_sizes
        ctx.input_split_sizes = input_split_sizes
        world_size = dist.get_world_size(group)
        if world_size == 1:
            return x
        out = x.new_empty((sum(output_split_sizes), x.shape[1]))
        dist.all_to_all_single(out, x.contiguous(), output_split_sizes, input_split_sizes, group=group)
        return out

    @staticmethod
    def backward(ctx, grad):
        return (None, _AllToAll.apply(ctx.group, grad, ctx.input_split_sizes, ctx.output_split_sizes), None, None)


class TopKRouter(nn.Module):
    def __init__(self, hidden: int, num_experts: int, top_k: int, aux_loss_coef: float = 1e-2):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(num_experts, hidden))
        nn.init.normal_(self.weight, std=0.02)
        self.num_experts = num_experts
        self.top_k = top_k
        self.aux_loss_coef = aux_loss_coef

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        logits = F.linear(x.float(), self.weight.float())
        probs = logits.softmax(dim=-1)
        top_p, top_idx = probs.topk(self.top_k, dim=-1)
        top_p = top_p / top_p.sum(dim=-1, keepdim=True)
        # switch-style load-balancing loss
        density = torch.zeros_like(probs).scatter_(1, top_idx, 1.0).mean(0)
        aux = self.aux_loss_coef * self.num_experts * (density * probs.mean(0)).sum()
        return top_p.to(x.dtype), top_idx, aux


class GroupedExperts(nn.Module):
    """num_local_experts SwiGLU FFNs whose weights are stored stacked for grouped GEMM."""

    def __init__(self, hidden: int, ffn: int, num_local_experts: int):
        super().__init__()
        self.w1 = nn.Parameter(torch.empty(num_local_experts, hidden, 2 * ffn))
        self.w2 = nn.Parameter(torch.empty(num_local_experts, ffn, hidden))
        nn.init.normal_(self.w1, std=0.02)
        nn.init.normal_(self.w2, std=0.02 / math.sqrt(2))

    def forward(self, x: torch.Tensor, tokens_per_expert: torch.Tensor) -> torch.Tensor:
        # grouped_gemm wants the batch sizes on the host
        batch_sizes = tokens_per_expert.cpu()
        h = gg.ops.gmm(x, self.w1, batch_sizes, trans_b=False)
        gate, up = h.chunk(2, dim=-1)
        h = F.silu(gate) * up
        return gg.ops.gmm(h, self.w2, batch_sizes, trans_b=False)


class ExpertParallelMoE(nn.Module):
    def __init__(
        self,
        hidden: int,
        ffn: int,
        num_experts: int,
        top_k: int = 2,
        ep_group: Optional[dist.ProcessGroup] = None,
        overlap_comm: bool = True,
    ):
        super().__init__()
        self.ep_group = ep_group
        self.ep_size = dist.get_world_size(ep_group) if dist.is_initialized() else 1
        assert num_experts % self.ep_size == 0
        self.num_experts = num_experts
        self.num_local_experts = num_experts // self.ep_size
        self.top_k = top_k
        self.router = TopKRouter(hidden, num_experts, top_k)
        self.experts = GroupedExperts(hidden, ffn, self.num_local_experts)
        self.overlap_comm = overlap_comm
        self.comm_stream = torch.cuda.Stream() if overlap_comm else None
        self.aux_loss = None

    def _permute(self, x, top_idx):
        flat_idx = top_idx.flatten()
        # megablocks sort + histogram kernels (CUDA)
        bin_ids, sort_order = mb_ops.sort(flat_idx.int(), int(math.ceil(math.log2(self.num_experts))))
        tokens_per_expert = mb_ops.histogram(flat_idx.int(), self.num_experts)
        permuted = x.index_select(0, sort_order // self.top_k)
        return permuted, sort_order, tokens_per_expert

    def _unpermute(self, y, sort_order, top_p, num_tokens):
        out = torch.empty_like(y)
        out.index_copy_(0, sort_order, y)
        out = out.view(num_tokens, self.top_k, -1)
        return (out * top_p.unsqueeze(-1)).sum(dim=1)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        shape = hidden_states.shape
        x = hidden_states.reshape(-1, shape[-1])
        top_p, top_idx, self.aux_loss = self.router(x)
        permuted, sort_order, tokens_per_expert = self._permute(x, top_idx)

        # exchange token counts so every rank knows how much it receives from every other rank
        counts = tokens_per_expert.view(self.ep_size, self.num_local_experts)
        recv_counts = torch.empty_like(counts)
        if self.ep_size > 1:
            dist.all_to_all_single(recv_counts, counts, group=self.ep_group)
        else:
            recv_counts = counts
        input_splits = counts.sum(dim=1).tolist()
        output_splits = recv_counts.sum(dim=1).tolist()

        if self.overlap_comm:
            # dispatch on a side stream so the router aux-loss / shared expert can run meanwhile
            self.comm_stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(self.comm_stream):
                dispatched = _AllToAll.apply(self.ep_group, permuted, output_splits, input_splits)
            torch.cuda.current_stream().wait_stream(self.comm_stream)
            dispatched.record_stream(torch.cuda.current_stream())
        else:
            dispatched = _AllToAll.apply(self.ep_group, permuted, output_splits, input_splits)

        # tokens arrive grouped by source rank; regroup them by local expert
        local_tokens_per_expert = recv_counts.sum(dim=0)
        regroup = torch.arange(self.ep_size * self.num_local_experts, device=x.device)
        regroup = regroup.view(self.ep_size, self.num_local_experts).t().flatten()
        chunks = torch.split(dispatched, recv_counts.flatten().tolist())
        dispatched = torch.cat([chunks[i] for i in regroup.tolist()], dim=0)

        expert_out = self.experts(dispatched, local_tokens_per_expert)

        # undo the regrouping and send results home
        chunks = torch.split(expert_out, recv_counts.t().flatten().tolist())
        inverse = torch.argsort(regroup)
        expert_out = torch.cat([chunks[i] for i in inverse.tolist()], dim=0)
        combined = _AllToAll.apply(self.ep_group, expert_out, input_splits, output_splits)
        out = self._unpermute(combined, sort_order, top_p, x.shape[0])
        return out.view(shape)


def build_moe_layer(args, ep_group=None) -> ExpertParallelMoE:
    layer = ExpertParallelMoE(
        hidden=args.hidden_size,
        ffn=args.moe_ffn_hidden_size,
        num_experts=args.num_experts,
        top_k=args.moe_router_topk,
        ep_group=ep_group,
        overlap_comm=args.moe_overlap_comm,
    )
    return layer.to(device=torch.cuda.current_device(), dtype=torch.bfloat16)
