"""Ring contrastive loss (Inf-CL style).

Each rank keeps its image features and passes text-feature blocks around the ring; the local
log-sum-exp of every block is computed with the tile kernel in flash.py while the next block is
already in flight on a dedicated communication stream.
"""
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F

from .flash import flash_lse


class RingComm:
    def __init__(self, process_group=None):
        self._pg = process_group
        self._ops = []
        self.rank = dist.get_rank(self._pg)
        self.world_size = dist.get_world_size(self._pg)
        self._reqs = None

        self.send_rank = (self.rank + 1) % self.world_size
        self.recv_rank = (self.rank - 1) % self.world_size

        if process_group is not None:
            self.send_rank = dist.get_global_rank(self._pg, self.send_rank)
            self.recv_rank = dist.get_global_rank(self._pg, self.recv_rank)

        # a dedicated stream so that the P2P transfer overlaps the tile kernel on the default stream
        self.comm_stream = torch.cuda.Stream()

    def send_recv(self, to_send, recv_tensor=None):
        if recv_tensor is None:
            res = torch.empty_like(to_send)
        else:
            res = recv_tensor

        send_op = dist.P2POp(dist.isend, to_send, self.send_rank, group=self._pg)
        recv_op = dist.P2POp(dist.irecv, res, self.recv_rank, group=self._pg)
        self._ops.append(send_op)
        self._ops.append(recv_op)
        return res

    def commit(self):
        if self._reqs is not None:
            raise RuntimeError("commit called twice")
        self.comm_stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.comm_stream):
            self._reqs = dist.batch_isend_irecv(self._ops)

    def wait(self):
        if self._reqs is None:
            raise RuntimeError("wait called before commit")
        for req in self._reqs:
            req.wait()
        torch.cuda.current_stream().wait_stream(self.comm_stream)
        self._reqs = None
        self._ops = []


class RingProb(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, scale, group):
        comm = RingComm(group)
        k = k.contiguous()
        lse_blocks = []
        k_blocks = []
        cur_k = k
        for step in range(comm.world_size):
            if step + 1 != comm.world_size:
                next_k = comm.send_recv(cur_k)
                comm.commit()
            lse_blocks.append(flash_lse(q, cur_k, scale))
            k_blocks.append(cur_k)
            if step + 1 != comm.world_size:
                comm.wait()
                cur_k = next_k
        lse = torch.logsumexp(torch.stack(lse_blocks, dim=0), dim=0)
        ctx.save_for_backward(q, *k_blocks)
        ctx.scale = scale
        ctx.group = group
        return lse

    @staticmethod
    def backward(ctx, dlse):
        q, *k_blocks = ctx.saved_tensors
        with torch.enable_grad():
            q_ = q.detach().requires_grad_(True)
            lse_blocks = []
            ks = []
            for kb in k_blocks:
                kb_ = kb.detach().requires_grad_(True)
                lse_blocks.append(flash_lse(q_, kb_, ctx.scale))
                ks.append(kb_)
            lse = torch.logsumexp(torch.stack(lse_blocks, dim=0), dim=0)
            grads = torch.autograd.grad(lse, [q_] + ks, dlse)
        dq, dks = grads[0], grads[1:]

        # the k-gradients belong to the ranks the blocks came from: send them back around the ring
        comm = RingComm(ctx.group)
        dk = dks[0].clone()
        for step in range(1, comm.world_size):
            src_block = dks[step]
            recv = comm.send_recv(src_block.contiguous())
            comm.commit()
            comm.wait()
            dk += recv
        return dq, dk, None, None


def cal_ring_loss(q, k, labels=None, scale=None, group=None):
    """Contrastive loss over the global batch with ring-passed keys.

    q, k: local [B, D] features (already normalised); labels index into the *global* key set.
    """
    if scale is None:
        scale = 1.0 / q.shape[-1] ** 0.5
    rank = dist.get_rank(group)
    if labels is None:
        labels = torch.arange(q.shape[0], device=q.device) + rank * q.shape[0]
    lse = RingProb.apply(q, k, scale, group)
    # the positive pair is always on the local block
    numerator = scale * (q * k[labels - rank * q.shape[0]]).sum(-1).float()
    return (lse - numerator).mean()


def cal_inf_loss(image_feats, text_feats, logit_scale, group=None):
    """Symmetric image<->text loss used by the Inf-CLIP trainer."""
    image_feats = F.normalize(image_feats, dim=-1)
    text_feats = F.normalize(text_feats, dim=-1)
    scale = logit_scale.exp()
    i2t = cal_ring_loss(image_feats, text_feats, scale=scale.item(), group=group)
    t2i = cal_ring_loss(text_feats, image_feats, scale=scale.item(), group=group)
    return (i2t + t2i) / 2


def _selftest():
    """torchrun --nproc_per_node 4 -m inf_cl.ring"""
    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    torch.manual_seed(dist.get_rank())
    q = torch.randn(1024, 256, device=f"cuda:{local_rank}", requires_grad=True)
    k = torch.randn(1024, 256, device=f"cuda:{local_rank}", requires_grad=True)
    loss = cal_ring_loss(F.normalize(q, dim=-1), F.normalize(k, dim=-1), scale=10.0)
    loss.backward()
    if dist.get_rank() == 0:
        print(f"ring loss {loss.item():.5f}, |dq| {q.grad.norm().item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    _selftest()
