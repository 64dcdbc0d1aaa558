# Contrastive Audio-Visual Pretraining (CAVP) model.
# Video encoder: SlowOnly ResNet3D-50 backbone + temporal pooling; audio encoder: PANNs-style CNN14 on mel.
import logging

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.distributed as dist

from .video_encoder import ResNet3dSlowOnly
from .audio_encoder import Cnn14Encoder

logger = logging.getLogger(__name__)


class GatherLayer(torch.autograd.Function):
    """Gather tensors from all workers with support for backward propagation.

    This implementation does not cut the gradients as torch.distributed.all_gather does.
    """

    @staticmethod
    def forward(ctx, x):
        output = [torch.zeros_like(x) for _ in range(dist.get_world_size())]
        dist.all_gather(output, x)
        return tuple(output)

    @staticmethod
    def backward(ctx, *grads):
        all_gradients = torch.stack(grads)
        dist.all_reduce(all_gradients)
        return all_gradients[dist.get_rank()]


def gather_features(video_features, audio_features, local_loss=False, gather_with_grad=True, rank=0, world_size=1):
    if gather_with_grad:
        all_video_features = torch.cat(GatherLayer.apply(video_features), dim=0)
        all_audio_features = torch.cat(GatherLayer.apply(audio_features), dim=0)
    else:
        gathered_video = [torch.zeros_like(video_features) for _ in range(world_size)]
        gathered_audio = [torch.zeros_like(audio_features) for _ in range(world_size)]
        dist.all_gather(gathered_video, video_features)
        dist.all_gather(gathered_audio, audio_features)
        if not local_loss:
            # ensure grads for local rank when all_* features don't have a gradient
            gathered_video[rank] = video_features
            gathered_audio[rank] = audio_features
        all_video_features = torch.cat(gathered_video, dim=0)
        all_audio_features = torch.cat(gathered_audio, dim=0)
    return all_video_features, all_audio_features


class CLIPLoss1D(nn.Module):
    def __init__(self, local_loss=False, gather_with_grad=True, cache_labels=True, rank=0, world_size=1):
        super().__init__()
        self.local_loss = local_loss
        self.gather_with_grad = gather_with_grad
        self.cache_labels = cache_labels
        self.rank = rank
        self.world_size = world_size
        self.prev_num_logits = 0
        self.labels = {}

    def forward(self, video_features, audio_features, logit_scale):
        device = video_features.device
        if self.world_size > 1:
            all_video, all_audio = gather_features(video_features, audio_features, self.local_loss,
                                                   self.gather_with_grad, self.rank, self.world_size)
            if self.local_loss:
                logits_per_video = logit_scale * video_features @ all_audio.T
                logits_per_audio = logit_scale * audio_features @ all_video.T
            else:
                logits_per_video = logit_scale * all_video @ all_audio.T
                logits_per_audio = logits_per_video.T
        else:
            logits_per_video = logit_scale * video_features @ audio_features.T
            logits_per_audio = logit_scale * audio_features @ video_features.T

        num_logits = logits_per_video.shape[0]
        if self.prev_num_logits != num_logits or device not in self.labels:
            labels = torch.arange(num_logits, device=device, dtype=torch.long)
            if self.world_size > 1 and self.local_loss:
                labels = labels + num_logits * self.rank
            if self.cache_labels:
                self.labels[device] = labels
                self.prev_num_logits = num_logits
        else:
            labels = self.labels[device]

        total_loss = (F.cross_entropy(logits_per_video, labels) + F.cross_entropy(logits_per_audio, labels)) / 2
        return total_loss


class CAVP(nn.Module):
    def __init__(self, feat_dim=512, video_encode="Slowonly_pool", audio_encode="Cnn14",
                 embed_dim=512, video_pretrained=True, audio_pretrained=True,
                 temporal_contrast_weight=1.0, semantic_contrast_weight=1.0):
        super().__init__()
        self.video_encode = video_encode
        self.audio_encode = audio_encode
        self.video_encoder = ResNet3dSlowOnly(depth=50, pretrained=video_pretrained)
        self.audio_encoder = Cnn14Encoder(pretrained=audio_pretrained)

        self.video_project_head = nn.Linear(2048, embed_dim)
        self.audio_project_head = nn.Linear(feat_dim * 4, embed_dim)
        self.video_pool = nn.AdaptiveAvgPool1d(1)
        self.audio_pool = nn.AdaptiveAvgPool1d(1)
        self.logit_scale = nn.Parameter(torch.ones([]) * np.log(1 / 0.07))
        self.temporal_contrast_weight = temporal_contrast_weight
        self.semantic_contrast_weight = semantic_contrast_weight

    def encode_video(self, video, normalize=True, pool=True):
        # video: B x T x C x H x W  ->  B x C x T x H x W
        video = video.permute(0, 2, 1, 3, 4).contiguous()
        feat = self.video_encoder(video)                       # B x 2048 x T' x h x w
        feat = feat.mean(dim=[-2, -1]).permute(0, 2, 1)        # B x T' x 2048
        feat = self.video_project_head(feat)                   # B x T' x D
        if pool:
            feat = self.video_pool(feat.permute(0, 2, 1)).squeeze(-1)
        if normalize:
            feat = F.normalize(feat, dim=-1)
        return feat

    def encode_audio(self, spec, normalize=True, pool=True):
        # spec: B x n_mels x T
        feat = self.audio_encoder(spec.unsqueeze(1))           # B x C x T'
        feat = self.audio_project_head(feat.permute(0, 2, 1))  # B x T' x D
        if pool:
            feat = self.audio_pool(feat.permute(0, 2, 1)).squeeze(-1)
        if normalize:
            feat = F.normalize(feat, dim=-1)
        return feat

    def forward(self, video, spec, output_dict=True):
        video_feat = self.encode_video(video, pool=False)
        audio_feat = self.encode_audio(spec, pool=False)
        video_pooled = F.normalize(video_feat.mean(dim=1), dim=-1)
        audio_pooled = F.normalize(audio_feat.mean(dim=1), dim=-1)
        if output_dict:
            return {
                "video_features": video_feat,
                "audio_features": audio_feat,
                "video_pooled": video_pooled,
                "audio_pooled": audio_pooled,
                "logit_scale": self.logit_scale.exp().clamp(max=100),
            }
        return video_feat, audio_feat, self.logit_scale.exp()


class CAVPLoss(nn.Module):
    """Semantic (cross-clip) + temporal (intra-clip) contrastive objective."""

    def __init__(self, rank=0, world_size=1, temporal_mix=True):
        super().__init__()
        self.semantic_loss = CLIPLoss1D(rank=rank, world_size=world_size)
        self.temporal_mix = temporal_mix

    def temporal_loss(self, video_features, audio_features, logit_scale):
        # contrast time steps inside each clip
        b, t, d = video_features.shape
        logits = logit_scale * torch.einsum("btd,bsd->bts", video_features, audio_features)
        labels = torch.arange(t, device=video_features.device).unsqueeze(0).expand(b, t)
        loss_v = F.cross_entropy(logits.reshape(b * t, t), labels.reshape(-1))
        loss_a = F.cross_entropy(logits.transpose(1, 2).reshape(b * t, t), labels.reshape(-1))
        return (loss_v + loss_a) / 2

    def forward(self, out):
        v, a, scale = out["video_features"], out["audio_features"], out["logit_scale"]
        semantic = self.semantic_loss(out["video_pooled"], out["audio_pooled"], scale)
        temporal = self.temporal_loss(F.normalize(v, dim=-1), F.normalize(a, dim=-1), scale)
        return semantic + temporal, {"semantic": semantic.detach(), "temporal": temporal.detach()}
