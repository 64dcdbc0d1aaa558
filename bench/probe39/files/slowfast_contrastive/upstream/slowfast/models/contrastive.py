#!/usr/bin/env python3
# Copyright (c) Facebook, Inc. and its affiliates. All Rights Reserved.

"""Contrastive (MoCo / BYOL / SimCLR style) self-supervised video models."""

import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import slowfast.models.losses as losses
import slowfast.utils.distributed as du
import slowfast.utils.logging as logging
from slowfast.models.video_model_builder import X3D, MViT, ResNet, SlowFast

from .build import MODEL_REGISTRY

logger = logging.get_logger(__name__)

# Supported model types
_MODEL_TYPES = {
    "slowfast": SlowFast,
    "slow": ResNet,
    "c2d": ResNet,
    "i3d": ResNet,
    "slow_c2d": ResNet,
    "x3d": X3D,
    "mvit": MViT,
}


@MODEL_REGISTRY.register()
class ContrastiveModel(nn.Module):
    """
    Contrastive Model, currently mainly focused on memory bank and CSC.
    """

    def __init__(self, cfg):
        super(ContrastiveModel, self).__init__()
        # Construct the model.
        self.backbone = _MODEL_TYPES[cfg.MODEL.ARCH](cfg)
        self.type = cfg.CONTRASTIVE.TYPE
        self.T = cfg.CONTRASTIVE.T
        self.dim = cfg.CONTRASTIVE.DIM
        self.length = cfg.CONTRASTIVE.LENGTH
        self.k = cfg.CONTRASTIVE.QUEUE_LEN
        self.mmt = cfg.CONTRASTIVE.MOMENTUM
        self.momentum_annealing = cfg.CONTRASTIVE.MOMENTUM_ANNEALING
        self.duration = 1
        self.cfg = cfg
        self.num_gpus = cfg.NUM_GPUS
        self.l2_norm = Normalize()
        self.knn_num_imgs = 0
        self.knn_on = cfg.CONTRASTIVE.KNN_ON
        self.train_labels = np.zeros((0,), dtype=np.int32)
        self.num_pos = 2
        self.num_crops = (
            self.cfg.DATA.TRAIN_CROP_NUM_TEMPORAL * self.cfg.DATA.TRAIN_CROP_NUM_SPATIAL
        )
        self.nce_loss_fun = losses.get_loss_func("contrastive_loss")(reduction="mean")
        assert self.cfg.MODEL.LOSS_FUNC == "contrastive_loss"
        self.softmax = nn.Softmax(dim=1).cuda()

        if self.type == "moco":
            self.backbone_hist = _MODEL_TYPES[cfg.MODEL.ARCH](cfg)
            for p in self.backbone_hist.parameters():
                p.requires_grad = False
            self.register_buffer("ptr", torch.tensor([0]))
            self.register_buffer("iter", torch.zeros([1], dtype=torch.long))
            self.register_buffer(
                "queue_x", torch.randn(self.k, self.dim).div_(math.sqrt(self.dim / 3))
            )
            self._batch_shuffle_on = (
                False if ("sync" in cfg.BN.NORM_TYPE and cfg.BN.GLOBAL_SYNC) else True
            )
        else:
            raise NotImplementedError("type {} not reimplemented here".format(self.type))

    @torch.no_grad()
    def _update_history(self):
        # momentum update
        iter = int(self.iter)
        m = self.mmt
        dist = {}
        for name, p in self.backbone.named_parameters():
            dist[name] = p

        if iter == 0:
            for name, p in self.backbone_hist.named_parameters():
                p.data.copy_(dist[name].data)

        for name, p in self.backbone_hist.named_parameters():
            p.data = dist[name].data * (1.0 - m) + p.data * m

    @torch.no_grad()
    def _batch_shuffle(self, x):
        if len(x) > 1:
            another_crop = True
        else:
            another_crop = False
        if another_crop:
            x, x_crop = x[0], x[1]
        else:
            x = x[0]

        if self.cfg.CONTRASTIVE.LOCAL_SHUFFLE_BN:
            if self.num_gpus > 1:
                if self.cfg.NUM_SHARDS > 1:
                    x = du.cat_all_gather(x, local=True)
                    if another_crop:
                        x_crop = du.cat_all_gather(x_crop, local=True)
                else:
                    x = du.cat_all_gather(x)
                    if another_crop:
                        x_crop = du.cat_all_gather(x_crop)
                gpu_idx = du.get_local_rank()
        else:
            if self.num_gpus > 1:
                x = du.cat_all_gather(x)
                if another_crop:
                    x_crop = du.cat_all_gather(x_crop)
                gpu_idx = torch.distributed.get_rank()

        idx_randperm = torch.randperm(x.shape[0]).cuda()
        if self.num_gpus > 1:
            torch.distributed.broadcast(idx_randperm, src=0)
        else:
            gpu_idx = 0
        idx_randperm = idx_randperm.view(self.num_gpus, -1)
        x = x[idx_randperm[gpu_idx, :]]
        if another_crop:
            x_crop = x_crop[idx_randperm[gpu_idx, :]]

        idx_restore = torch.argsort(idx_randperm.view(-1))
        idx_restore = idx_restore.view(self.num_gpus, -1)
        if another_crop:
            return [x, x_crop], idx_restore
        else:
            return [x], idx_restore

    @torch.no_grad()
    def _batch_unshuffle(self, x, idx_restore):
        if self.num_gpus > 1:
            if self.cfg.CONTRASTIVE.LOCAL_SHUFFLE_BN:
                x = du.cat_all_gather(x, local=True)
                gpu_idx = du.get_local_rank()
            else:
                x = du.cat_all_gather(x)
                gpu_idx = torch.distributed.get_rank()
        else:
            gpu_idx = 0

        idx = idx_restore[gpu_idx, :]
        x = x[idx]
        return x

    @torch.no_grad()
    def _dequeue_and_enqueue(self, keys):
        ptr = int(self.ptr.item())
        if self.num_gpus > 1:
            keys = du.cat_all_gather(keys)
        num_items = keys.size(0)
        if ptr + num_items > self.k:
            num_items = self.k - ptr
        self.queue_x[ptr : ptr + num_items, :] = keys[:num_items]
        self.ptr[0] = (ptr + num_items) % self.k

    def compute_key_feat(self, clips_k):
        with torch.no_grad():
            if self._batch_shuffle_on:
                clips_k, idx_restore = self._batch_shuffle(clips_k)
            q_k = self.backbone_hist(clips_k)
            if isinstance(q_k, tuple):
                q_k = q_k[0]
            q_k = self.l2_norm(q_k)
            if self._batch_shuffle_on:
                q_k = self._batch_unshuffle(q_k, idx_restore)
        return q_k

    def moco_loss(self, q, k):
        # Compute logits in fp32: small temperatures overflow in half precision.
        with torch.cuda.amp.autocast(enabled=False):
            q, k = q.float(), k.float()
            l_pos = torch.einsum("nc,nc->n", [q, k]).unsqueeze(-1)
            l_neg = torch.einsum("nc,kc->nk", [q, self.queue_x.clone().detach().float()])
            logits = torch.cat([l_pos, l_neg], dim=1)
            logits /= self.T
            labels = torch.zeros(logits.shape[0], dtype=torch.long).cuda()
            loss = F.cross_entropy(logits, labels)
        return loss

    def forward(self, clips, index=None, time=None, epoch_exact=None, keys=None):
        if epoch_exact is not None and self.momentum_annealing:
            self.mmt = 1 - (1 - self.cfg.CONTRASTIVE.MOMENTUM) * (
                math.cos(math.pi * epoch_exact / self.cfg.SOLVER.MAX_EPOCH) + 1.0
            ) * 0.5

        assert self.type == "moco"
        clip_q = clips[0:1]
        if self.training:
            self._update_history()
            self.iter += 1
        q = self.l2_norm(self.backbone(clip_q))
        if isinstance(q, tuple):
            q = q[0]

        clips_k = clips[1:2]
        k = self.compute_key_feat(clips_k)
        loss = self.moco_loss(q, k)
        if self.training:
            self._dequeue_and_enqueue(k)
        return q, loss


class Normalize(nn.Module):
    def __init__(self, power=2, dim=1):
        super(Normalize, self).__init__()
        self.dim = dim
        self.power = power

    def forward(self, x):
        norm = x.pow(self.power).sum(self.dim, keepdim=True).pow(1.0 / self.power)
        out = x.div(norm)
        return out
