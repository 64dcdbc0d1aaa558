#!/usr/bin/env python

# Copyright 2024 Seungjae Lee and Yibin Wang and Haritheja Etukuru
# and H. Jin Kim and Nur Muhammad Mahi Shafiullah and Lerrel Pinto
# and The HuggingFace Inc. team. All rights reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""Residual vector quantisation used by VQ-BeT (adapted from lucidrains/vector-quantize-pytorch)."""

from functools import partial
from math import ceil

import torch
import torch.distributed as distributed
import torch.nn.functional as F  # noqa: N812
from einops import pack, rearrange, reduce, repeat, unpack
from torch import einsum, nn
from torch.cuda.amp import autocast


def exists(val):
    return val is not None


def default(val, d):
    return val if exists(val) else d


def identity(t):
    return t


def l2norm(t):
    return F.normalize(t, p=2, dim=-1)


def log(t, eps=1e-20):
    return torch.log(t.clamp(min=eps))


def uniform_init(*shape):
    t = torch.empty(shape)
    nn.init.kaiming_uniform_(t)
    return t


def gumbel_noise(t):
    noise = torch.zeros_like(t).uniform_(0, 1)
    return -log(-log(noise))


def gumbel_sample(logits, temperature=1.0, stochastic=False, straight_through=False, dim=-1, training=True):
    dtype, size = logits.dtype, logits.shape[dim]

    if training and stochastic and temperature > 0:
        sampling_logits = (logits / temperature) + gumbel_noise(logits)
    else:
        sampling_logits = logits

    ind = sampling_logits.argmax(dim=dim)
    one_hot = F.one_hot(ind, size).type(dtype)

    assert not (
        straight_through and temperature <= 0.0
    ), "if straight_through is True, temperature must be greater than 0"

    if not straight_through or temperature <= 0.0 or not training:
        return ind, one_hot

    π1 = (logits / temperature).softmax(dim=dim)
    one_hot = one_hot + π1 - π1.detach()
    return ind, one_hot


def cdist(x, y):
    x2 = reduce(x**2, "b n d -> b n", "sum")
    y2 = reduce(y**2, "b n d -> b n", "sum")
    xy = einsum("b i d, b j d -> b i j", x, y) * -2
    return (rearrange(x2, "b i -> b i 1") + rearrange(y2, "b j -> b 1 j") + xy).clamp(min=0).sqrt()


def ema_inplace(old, new, decay):
    is_mps = str(old.device).startswith("mps:")

    if not is_mps:
        old.lerp_(new, 1 - decay)
    else:
        old.mul_(decay).add_(new * (1 - decay))


def laplace_smoothing(x, n_categories, eps=1e-5):
    return (x + eps) / (x.sum() + n_categories * eps)


def sample_vectors(samples, num):
    num_samples, device = samples.shape[0], samples.device
    if num_samples >= num:
        indices = torch.randperm(num_samples, device=device)[:num]
    else:
        indices = torch.randint(0, num_samples, (num,), device=device)

    return samples[indices]


def batched_sample_vectors(samples, num):
    return torch.stack([sample_vectors(sample, num) for sample in samples.unbind(dim=0)], dim=0)


def pad_shape(shape, size, dim=0):
    return [size if i == dim else s for i, s in enumerate(shape)]


def batched_bincount(x, *, minlength):
    batch, dtype, device = x.shape[0], x.dtype, x.device
    target = torch.zeros(batch, minlength, dtype=dtype, device=device)
    values = torch.ones_like(x)
    target.scatter_add_(-1, x, values)
    return target


def kmeans(samples, num_clusters, num_iters=10, use_cosine_sim=False, sample_fn=batched_sample_vectors):
    num_codebooks, dim, dtype = samples.shape[0], samples.shape[-1], samples.dtype

    # keep the clustering in fp32 even when the policy trains under AMP
    with torch.autocast("cuda", enabled=False):
        samples = samples.float()
        means = sample_fn(samples, num_clusters)

        for _ in range(num_iters):
            if use_cosine_sim:
                dists = samples @ rearrange(means, "h n d -> h d n")
            else:
                dists = -torch.cdist(samples, means, p=2)

            buckets = torch.argmax(dists, dim=-1)
            bins = batched_bincount(buckets, minlength=num_clusters)

            zero_mask = bins == 0
            bins_min_clamped = bins.masked_fill(zero_mask, 1)

            new_means = buckets.new_zeros(num_codebooks, num_clusters, dim, dtype=torch.float32)

            new_means.scatter_add_(1, repeat(buckets, "h n -> h n d", d=dim), samples)
            new_means = new_means / rearrange(bins_min_clamped, "... -> ... 1")

            if use_cosine_sim:
                new_means = l2norm(new_means)

            means = torch.where(rearrange(zero_mask, "... -> ... 1"), means, new_means)

    return means.to(dtype), bins


class EuclideanCodebook(nn.Module):
    def __init__(
        self,
        dim,
        codebook_size,
        num_codebooks=1,
        kmeans_init=False,
        kmeans_iters=10,
        decay=0.8,
        eps=1e-5,
        threshold_ema_dead_code=2,
        learnable_codebook=False,
        ema_update=True,
    ):
        super().__init__()
        self.transform_input = identity
        self.decay = decay
        self.ema_update = ema_update

        init_fn = uniform_init if not kmeans_init else torch.zeros
        embed = init_fn(num_codebooks, codebook_size, dim)

        self.codebook_size = codebook_size
        self.num_codebooks = num_codebooks
        self.kmeans_iters = kmeans_iters
        self.eps = eps
        self.threshold_ema_dead_code = threshold_ema_dead_code

        self.sample_fn = batched_sample_vectors
        self.kmeans_all_reduce_fn = distributed.all_reduce if distributed.is_initialized() else identity

        self.register_buffer("initted", torch.Tensor([not kmeans_init]))
        self.register_buffer("cluster_size", torch.zeros(num_codebooks, codebook_size))
        self.register_buffer("embed_avg", embed.clone())

        self.learnable_codebook = learnable_codebook
        if learnable_codebook:
            self.embed = nn.Parameter(embed)
        else:
            self.register_buffer("embed", embed)

    @torch.jit.ignore
    def init_embed_(self, data, mask=None):
        if self.initted:
            return

        if exists(mask):
            c = data.shape[0]
            data = rearrange(data[mask], "(c n) d -> c n d", c=c)

        embed, cluster_size = kmeans(data, self.codebook_size, self.kmeans_iters, sample_fn=self.sample_fn)

        embed_sum = embed * rearrange(cluster_size, "... -> ... 1")

        self.embed.data.copy_(embed)
        self.embed_avg.data.copy_(embed_sum)
        self.cluster_size.data.copy_(cluster_size)
        self.initted.data.copy_(torch.Tensor([True]))

    def replace(self, batch_samples, batch_mask):
        for ind, (samples, mask) in enumerate(zip(batch_samples.unbind(dim=0), batch_mask.unbind(dim=0))):
            if not torch.any(mask):
                continue

            sampled = self.sample_fn(rearrange(samples, "... -> 1 ..."), mask.sum().item())
            sampled = rearrange(sampled, "1 ... -> ...")

            self.embed.data[ind][mask] = sampled
            self.cluster_size.data[ind][mask] = self.threshold_ema_dead_code
            self.embed_avg.data[ind][mask] = sampled * self.threshold_ema_dead_code

    def expire_codes_(self, batch_samples):
        if self.threshold_ema_dead_code == 0:
            return

        expired_codes = self.cluster_size < self.threshold_ema_dead_code

        if not torch.any(expired_codes):
            return

        batch_samples = rearrange(batch_samples, "h ... d -> h (...) d")
        self.replace(batch_samples, batch_mask=expired_codes)

    @autocast(enabled=False)
    def forward(self, x, sample_codebook_temp=None, mask=None, freeze_codebook=False):
        needs_codebook_dim = x.ndim < 4
        sample_codebook_temp = default(sample_codebook_temp, 0.0)

        x = x.float()

        if needs_codebook_dim:
            x = rearrange(x, "... -> 1 ...")

        flatten, ps = pack([x], "h * d")

        self.init_embed_(flatten, mask=mask)

        embed = self.embed if self.learnable_codebook else self.embed.detach()

        dist = -cdist(flatten, embed)

        embed_ind, embed_onehot = gumbel_sample(
            dist, dim=-1, temperature=sample_codebook_temp, training=self.training
        )

        embed_ind = unpack(embed_ind, ps, "h *")[0]

        if self.training:
            unpacked_onehot = unpack(embed_onehot, ps, "h * c")[0]
            quantize = einsum("h b n c, h c d -> h b n d", unpacked_onehot, embed)
        else:
            quantize = batched_embedding(embed_ind, embed)

        if self.training and self.ema_update and not freeze_codebook:
            cluster_size = embed_onehot.sum(dim=1)
            self.kmeans_all_reduce_fn(cluster_size)
            ema_inplace(self.cluster_size.data, cluster_size, self.decay)

            embed_sum = einsum("h n d, h n c -> h c d", flatten, embed_onehot)
            self.kmeans_all_reduce_fn(embed_sum.contiguous())
            ema_inplace(self.embed_avg.data, embed_sum, self.decay)

            cluster_size = laplace_smoothing(self.cluster_size, self.codebook_size, self.eps) * self.cluster_size.sum(
                dim=-1, keepdim=True
            )

            embed_normalized = self.embed_avg / rearrange(cluster_size, "... -> ... 1")
            self.embed.data.copy_(embed_normalized)
            self.expire_codes_(x)

        if needs_codebook_dim:
            quantize, embed_ind = map(lambda t: rearrange(t, "1 ... -> ..."), (quantize, embed_ind))

        dist = unpack(dist, ps, "h * d")[0]

        return quantize, embed_ind, dist


def batched_embedding(indices, embeds):
    batch, dim = indices.shape[1], embeds.shape[-1]
    indices = repeat(indices, "h b n -> h b n d", d=dim)
    embeds = repeat(embeds, "h c d -> h b c d", b=batch)
    return embeds.gather(2, indices)


def round_up_multiple(num, mult):
    return ceil(num / mult) * mult


class ResidualVQ(nn.Module):
    """Residual VQ: https://arxiv.org/abs/2107.03312"""

    def __init__(self, *, dim, num_quantizers, codebook_size, codebook_dim=None, shared_codebook=False, **kwargs):
        super().__init__()
        codebook_dim = default(codebook_dim, dim)
        requires_projection = codebook_dim != dim
        self.project_in = nn.Linear(dim, codebook_dim) if requires_projection else nn.Identity()
        self.project_out = nn.Linear(codebook_dim, dim) if requires_projection else nn.Identity()

        self.num_quantizers = num_quantizers
        self.codebook_size = codebook_size
        self.layers = nn.ModuleList(
            [EuclideanCodebook(dim=codebook_dim, codebook_size=codebook_size, **kwargs) for _ in range(num_quantizers)]
        )

        if shared_codebook:
            first_codebook = self.layers[0]
            for layer in self.layers[1:]:
                layer.embed = first_codebook.embed

    @property
    def codebooks(self):
        codebooks = [layer.embed for layer in self.layers]
        codebooks = torch.stack(codebooks, dim=0)
        codebooks = rearrange(codebooks, "q 1 c d -> q c d")
        return codebooks

    def get_codes_from_indices(self, indices):
        batch, quantize_dim = indices.shape[0], indices.shape[-1]
        indices, ps = pack([indices], "b * q")
        if quantize_dim < self.num_quantizers:
            indices = F.pad(indices, (0, self.num_quantizers - quantize_dim), value=-1)
        codebooks = repeat(self.codebooks, "q c d -> q b c d", b=batch)
        gather_indices = repeat(indices, "b n q -> q b n d", d=codebooks.shape[-1])
        mask = gather_indices == -1.0
        gather_indices = gather_indices.masked_fill(mask, 0)
        all_codes = codebooks.gather(2, gather_indices)
        all_codes = all_codes.masked_fill(mask, 0.0)
        (all_codes,) = unpack(all_codes, ps, "q b * d")
        return all_codes

    def forward(self, x, indices=None, sample_codebook_temp=None, freeze_codebook=False):
        x = self.project_in(x)
        quantized_out = 0.0
        residual = x
        all_indices = []
        for layer in self.layers:
            quantized, embed_indices, _ = layer(
                residual, sample_codebook_temp=sample_codebook_temp, freeze_codebook=freeze_codebook
            )
            residual = residual - quantized.detach()
            quantized_out = quantized_out + quantized
            all_indices.append(embed_indices)

        quantized_out = self.project_out(quantized_out)
        all_indices = torch.stack(all_indices, dim=-1)
        return quantized_out, all_indices, partial(self.get_codes_from_indices)
