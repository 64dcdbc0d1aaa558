# bare bones training script using sparse kernels and sharding/data parallel.
# the main purpose of this code is to provide a reference implementation to compare
# against when implementing our training methodology into other codebases, and to
# demonstrate how sharding/DP can be implemented for autoencoders. some limitations:
# - many basic features (e.g. checkpointing, data loading, validation) are not implemented,
# - the codebase is not designed to be extensible or easily hackable.
# - this code is not guaranteed to run efficiently out of the box / in
#   combination with other changes, so you should profile it and make changes as needed.
#
# example launch command:
#    torchrun --nproc-per-node 8 train.py

import os
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
import wandb
from torch.distributed import ReduceOp

from sparse_autoencoder.kernels import TritonDecoderAutograd
from sparse_autoencoder.train_utils import geometric_median

RANK = 0


class Logger:
    def __init__(self, **kws):
        self.vals = {}
        self.enabled = (RANK == 0) and not kws.pop("dummy", False)
        if self.enabled:
            wandb.init(**kws)

    def logkv(self, k, v):
        if self.enabled:
            self.vals[k] = v.detach() if isinstance(v, torch.Tensor) else v
        return v

    def dumpkvs(self):
        if self.enabled:
            wandb.log(self.vals)
            self.vals = {}


class ShardingComms:
    def __init__(self, n_replicas: int, n_op_shards: int):
        self.n_replicas = n_replicas
        self.n_op_shards = n_op_shards
        self.rank = int(os.environ.get("RANK", 0))
        self.world_size = n_replicas * n_op_shards
        self.sh_rank = self.rank % n_op_shards
        self.dp_rank = self.rank // n_op_shards
        self._sh_group = None
        self._dp_group = None

    def init(self):
        global RANK
        RANK = self.rank
        local_rank = int(os.environ.get("LOCAL_RANK", 0))
        torch.cuda.set_device(local_rank)
        if self.world_size > 1:
            dist.init_process_group(
                backend="nccl", rank=self.rank, world_size=self.world_size
            )
            for dp in range(self.n_replicas):
                ranks = [dp * self.n_op_shards + s for s in range(self.n_op_shards)]
                g = dist.new_group(ranks, backend="nccl")
                if self.rank in ranks:
                    self._sh_group = g
            for s in range(self.n_op_shards):
                ranks = [dp * self.n_op_shards + s for dp in range(self.n_replicas)]
                g = dist.new_group(ranks=ranks, backend="nccl")
                if self.rank in ranks:
                    self._dp_group = g
        return self

    def sh_allreduce_forward(self, x: torch.Tensor) -> torch.Tensor:
        if self._sh_group is None:
            return x
        dist.all_reduce(x, group=self._sh_group)
        return x

    def sh_allreduce_scale(self, scaler):
        # found_inf must agree across shards, otherwise the shards diverge
        if self._sh_group is None:
            return
        for state in scaler._per_optimizer_states.values():
            for t in state["found_inf_per_device"].values():
                dist.all_reduce(t, op=ReduceOp.MAX, group=self._sh_group)

    def dp_allreduce_(self, model: nn.Module):
        if self._dp_group is None:
            return
        for p in model.parameters():
            if p.grad is not None:
                dist.all_reduce(p.grad, op=ReduceOp.SUM, group=self._dp_group)
                p.grad /= self.n_replicas

    def all_broadcast(self, x: torch.Tensor) -> torch.Tensor:
        if self.world_size > 1:
            dist.broadcast(x, src=0)
        return x


def make_torch_comms(n_op_shards=4, n_replicas=2):
    if "RANK" not in os.environ:
        assert n_op_shards == 1
        assert n_replicas == 1
        return ShardingComms(n_replicas=1, n_op_shards=1).init()
    return ShardingComms(n_replicas=n_replicas, n_op_shards=n_op_shards).init()


class FastAutoencoder(nn.Module):
    """
    Top-K Autoencoder with sparse kernels. Implements:

        latents = relu(topk(encoder(x - pre_bias) + latent_bias))
        recons = decoder(latents) + pre_bias
    """

    def __init__(
        self,
        n_dirs_local: int,
        d_model: int,
        k: int,
        auxk: int | None,
        dead_steps_threshold: int,
        comms: ShardingComms | None = None,
    ):
        super().__init__()
        self.n_dirs_local = n_dirs_local
        self.d_model = d_model
        self.k = k
        self.auxk = auxk
        self.comms = comms if comms is not None else ShardingComms(1, 1)
        self.dead_steps_threshold = dead_steps_threshold

        self.encoder = nn.Linear(d_model, n_dirs_local, bias=False)
        self.decoder = nn.Linear(n_dirs_local, d_model, bias=False)

        self.pre_bias = nn.Parameter(torch.zeros(d_model))
        self.latent_bias = nn.Parameter(torch.zeros(n_dirs_local))

        self.stats_last_nonzero: torch.Tensor
        self.register_buffer("stats_last_nonzero", torch.zeros(n_dirs_local, dtype=torch.long))

        def auxk_mask_fn(x):
            dead_mask = self.stats_last_nonzero > dead_steps_threshold
            x.data *= dead_mask  # inplace to save memory
            return x

        self.auxk_mask_fn = auxk_mask_fn

        ## initialization

        # "tied" init
        self.decoder.weight.data = self.encoder.weight.data.T.clone()

        # store decoder in column major layout for kernel
        self.decoder.weight.data = self.decoder.weight.data.T.contiguous().T

        unit_norm_decoder_(self)

    def forward(self, x):
        x = x - self.pre_bias
        latents_pre_act = self.encoder(x) + self.latent_bias

        vals, inds = torch.topk(latents_pre_act, k=self.k, dim=-1)

        ## set num nonzero stat ##
        tmp = torch.zeros_like(self.stats_last_nonzero)
        tmp.scatter_add_(
            0,
            inds.reshape(-1),
            (vals > 1e-3).to(tmp.dtype).reshape(-1),
        )
        self.stats_last_nonzero *= 1 - tmp.clamp(max=1)
        self.stats_last_nonzero += 1
        ## end stats ##

        ## auxk
        if self.auxk is not None:  # for auxk
            # IMPORTANT: has to go after stats update!
            # WARN: auxk_mask_fn can mutate latents_pre_act!
            auxk_vals, auxk_inds = torch.topk(
                self.auxk_mask_fn(latents_pre_act), k=self.auxk, dim=-1
            )
        else:
            auxk_inds = None
            auxk_vals = None

        ## end auxk

        vals = torch.relu(vals)
        if auxk_vals is not None:
            auxk_vals = torch.relu(auxk_vals)

        recons = self.decode_sparse(inds, vals)

        return recons, {
            "auxk_inds": auxk_inds,
            "auxk_vals": auxk_vals,
        }

    def decode_sparse(self, inds, vals):
        recons = TritonDecoderAutograd.apply(inds, vals, self.decoder.weight)
        recons = self.comms.sh_allreduce_forward(recons)

        return recons + self.pre_bias


def unit_norm_decoder_(autoencoder: FastAutoencoder) -> None:
    autoencoder.decoder.weight.data /= autoencoder.decoder.weight.data.norm(dim=0)


def unit_norm_decoder_grad_adjustment_(autoencoder) -> None:
    assert autoencoder.decoder.weight.grad is not None

    # remove the component of the gradient parallel to each (unit-norm) decoder column
    w = autoencoder.decoder.weight
    w.grad -= (w.grad * w.data).sum(dim=0, keepdim=True) * w.data


def batch_tensors(
    it: Iterable[torch.Tensor],
    batch_size: int,
    drop_last=True,
    stream=None,
) -> Iterator[torch.Tensor]:
    """
    input is iterable of tensors of shape [batch_old, ...]
    output is iterable of tensors of shape [batch_size, ...]
    batch_old does not need to be divisible by batch_size
    """
    tensors = []
    batch_so_far = 0

    for t in it:
        tensors.append(t)
        batch_so_far += t.shape[0]

        if sum(t.shape[0] for t in tensors) < batch_size:
            continue

        t = torch.cat(tensors, dim=0)

        while t.shape[0] >= batch_size:
            # overlap the host->device copy of the next batch with compute on the current one
            with torch.cuda.stream(stream):
                yield t[:batch_size].to("cuda", non_blocking=True)
            t = t[batch_size:]

        tensors = [t] if t.shape[0] > 0 else []
        batch_so_far = t.shape[0]

    if not drop_last and batch_so_far > 0:
        yield torch.cat(tensors, dim=0)


def init_from_data_(ae, stats_acts_sample, comms):
    ae.pre_bias.data = (
        geometric_median(stats_acts_sample[:32768].float().cpu()).cuda().float()
    )
    comms.all_broadcast(ae.pre_bias.data)

    # encoder initialization (note: in our ablations we couldn't find clear evidence that this is beneficial, this is just to ensure exact match with internal codebase)
    d_model = ae.d_model
    with torch.no_grad():
        x = torch.randn(256, d_model).cuda().to(ae.pre_bias.dtype)
        x /= x.norm(dim=-1, keepdim=True)
        x += ae.pre_bias.data
        comms.all_broadcast(x)
        recons, _ = ae(x)
        recons_norm = (recons - ae.pre_bias.data).norm(dim=-1).mean()

        ae.encoder.weight.data /= recons_norm.item()
        print("x norm", x.norm(dim=-1).mean().item())
        print("out norm", (ae(x)[0] - ae.pre_bias.data).norm(dim=-1).mean().item())


def training_loop_(
    ae,
    train_acts_iter,
    loss_fn,
    lr,
    comms,
    eps=6.25e-10,
    clip_grad=None,
    ema_multiplier=0.999,
    logger=None,
):
    if logger is None:
        logger = Logger(dummy=True)

    scaler = torch.cuda.amp.GradScaler()
    autocast_ctx_manager = torch.cuda.amp.autocast()

    opt = torch.optim.Adam(ae.parameters(), lr=lr, eps=eps, fused=True)

    for i, flat_acts_train_batch in enumerate(train_acts_iter):
        flat_acts_train_batch = flat_acts_train_batch.cuda()

        with autocast_ctx_manager:
            recons, info = ae(flat_acts_train_batch)

            loss = loss_fn(ae, flat_acts_train_batch, recons, info, logger)

        print0(i, loss)

        logger.logkv("loss_scale", scaler.get_scale())

        if RANK == 0:
            wandb.log({"train_loss": loss.item()})

        loss = scaler.scale(loss)
        loss.backward()

        unit_norm_decoder_(ae)
        unit_norm_decoder_grad_adjustment_(ae)

        # allreduce gradients
        comms.dp_allreduce_(ae)

        # keep fp16 loss scale synchronized across shards
        comms.sh_allreduce_scale(scaler)

        # if you want to do anything with the gradients that depends on the absolute scale (e.g clipping, do it after the unscale_)
        scaler.unscale_(opt)

        # gradient clipping
        if clip_grad is not None:
            grad_norm = torch.nn.utils.clip_grad_norm_(ae.parameters(), clip_grad)
            logger.logkv("grad_norm", grad_norm)

        scaler.step(opt)
        scaler.update()

        opt.zero_grad(set_to_none=True)
        logger.dumpkvs()


def print0(*a, **k):
    if RANK == 0:
        print(*a, **k)


@dataclass
class Config:
    n_op_shards: int = 1
    n_replicas: int = 8

    n_dirs: int = 32768
    bs: int = 131072
    d_model: int = 768
    k: int = 32
    auxk: int = 256

    lr: float = 1e-4
    eps: float = 6.25e-10
    clip_grad: float | None = None
    auxk_coef: float = 1 / 32
    dead_toks_threshold: int = 10_000_000
    ema_multiplier: float | None = None

    wandb_project: str | None = None
    wandb_name: str | None = None


def main():
    cfg = Config()
    comms = make_torch_comms(n_op_shards=cfg.n_op_shards, n_replicas=cfg.n_replicas)

    ## dataloading is left as an exercise for the reader
    acts_iter = ...
    stats_acts_sample = ...

    n_dirs_local = cfg.n_dirs // cfg.n_op_shards
    bs_local = cfg.bs // cfg.n_replicas

    ae = FastAutoencoder(
        n_dirs_local=n_dirs_local,
        d_model=cfg.d_model,
        k=cfg.k,
        auxk=cfg.auxk,
        dead_steps_threshold=cfg.dead_toks_threshold // cfg.bs,
        comms=comms,
    )
    ae.cuda()
    init_from_data_(ae, stats_acts_sample, comms)
    # IMPORTANT: make sure all DP ranks have the same params
    for p in ae.parameters():
        comms.all_broadcast(p.data)

    mse_scale = (
        1 / ((stats_acts_sample.float().mean(dim=0) - stats_acts_sample.float()) ** 2).mean()
    )
    comms.all_broadcast(mse_scale)
    mse_scale = mse_scale.item()

    logger = Logger(
        project=cfg.wandb_project,
        name=cfg.wandb_name,
        dummy=cfg.wandb_project is None,
    )

    copy_stream = torch.cuda.Stream()
    training_loop_(
        ae,
        batch_tensors(
            acts_iter,
            bs_local,
            drop_last=True,
            stream=copy_stream,
        ),
        lambda ae, flat_acts_train_batch, recons, info, logger: (
            # MSE
            logger.logkv("train_recons", mse_scale * F.mse_loss(recons, flat_acts_train_batch))
            # AuxK
            + logger.logkv(
                "train_maxk_recons",
                cfg.auxk_coef
                * normalized_mse(
                    ae.decode_sparse(
                        info["auxk_inds"],
                        info["auxk_vals"],
                    ),
                    flat_acts_train_batch - recons.detach() + ae.pre_bias.detach(),
                ).nan_to_num(0),
            )
        ),
        lr=cfg.lr,
        eps=cfg.eps,
        clip_grad=cfg.clip_grad,
        ema_multiplier=cfg.ema_multiplier,
        logger=logger,
        comms=comms,
    )


def normalized_mse(recon: torch.Tensor, xs: torch.Tensor) -> torch.Tensor:
    # only used for auxk
    xs_mu = xs.mean(dim=0)

    loss = F.mse_loss(recon, xs) / F.mse_loss(xs_mu[None, :].broadcast_to(xs.shape), xs)

    return loss


if __name__ == "__main__":
    main()
