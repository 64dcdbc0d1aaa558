import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from einops import rearrange
from functools import partial

try:
    import xformers.ops as xops
    XFORMERS_AVAILABLE = True
except ImportError:
    XFORMERS_AVAILABLE = False

from dalle2_pytorch import DiffusionPrior
from dalle2_pytorch.dalle2_pytorch import l2norm, default, exists, RotaryEmbedding, SinusoidalPosEmb, MLP
from dalle2_pytorch.dalle2_pytorch import FeedForward, LayerNorm


class MindEyeModule(nn.Module):
    def __init__(self):
        super(MindEyeModule, self).__init__()

    def forward(self, x):
        return x


class RidgeRegression(torch.nn.Module):
    # make sure to add weight_decay when initializing optimizer
    def __init__(self, input_sizes, out_features, seq_len=1):
        super(RidgeRegression, self).__init__()
        self.seq_len = seq_len
        self.out_features = out_features
        self.linears = torch.nn.ModuleList([
            torch.nn.Linear(input_size, out_features) for input_size in input_sizes
        ])

    def forward(self, x, subj_idx=0):
        out = torch.cat([self.linears[subj_idx](x[:, seq]).unsqueeze(1) for seq in range(self.seq_len)], dim=1)
        return out


class BrainNetwork(nn.Module):
    def __init__(self, h=4096, in_dim=15724, out_dim=768, seq_len=1, n_blocks=4, drop=.15,
                 clip_size=768, blurry_recon=True, clip_scale=1):
        super().__init__()
        self.seq_len = seq_len
        self.h = h
        self.clip_size = clip_size
        self.blurry_recon = blurry_recon
        self.clip_scale = clip_scale
        self.mixer_blocks1 = nn.ModuleList([
            self.mixer_block1(h, drop) for _ in range(n_blocks)
        ])
        self.mixer_blocks2 = nn.ModuleList([
            self.mixer_block2(seq_len, drop) for _ in range(n_blocks)
        ])

        # Output linear layer
        self.backbone_linear = nn.Linear(h * seq_len, out_dim, bias=True)
        if self.clip_scale > 0:
            self.clip_proj = self.projector(clip_size, clip_size, h=clip_size)

        if self.blurry_recon:
            self.blin1 = nn.Linear(h * seq_len, 4 * 28 * 28, bias=True)
            self.bdropout = nn.Dropout(.3)
            self.bnorm = nn.GroupNorm(1, 64)
            self.bupsampler = nn.Sequential(
                nn.ConvTranspose2d(64, 64, 4, stride=2, padding=1), nn.GroupNorm(1, 64), nn.SiLU(),
                nn.Conv2d(64, 4, 3, padding=1),
            )
            self.b_maps_projector = nn.Sequential(
                nn.Conv2d(64, 512, 1, bias=False), nn.GroupNorm(1, 512), nn.ReLU(True),
                nn.Conv2d(512, 512, 1, bias=True),
            )

    def projector(self, in_dim, out_dim, h=2048):
        return nn.Sequential(
            nn.LayerNorm(in_dim), nn.GELU(), nn.Linear(in_dim, h),
            nn.LayerNorm(h), nn.GELU(), nn.Linear(h, h),
            nn.LayerNorm(h), nn.GELU(), nn.Linear(h, out_dim),
        )

    def mlp(self, in_dim, out_dim, drop):
        return nn.Sequential(nn.Linear(in_dim, out_dim), nn.GELU(), nn.Dropout(drop), nn.Linear(out_dim, out_dim))

    def mixer_block1(self, h, drop):
        return nn.Sequential(nn.LayerNorm(h), self.mlp(h, h, drop))

    def mixer_block2(self, seq_len, drop):
        return nn.Sequential(nn.LayerNorm(seq_len), self.mlp(seq_len, seq_len, drop))

    def forward(self, x):
        # make empty tensors
        c, b = torch.Tensor([0.]), [[0.], [0.]]

        # Mixer blocks
        residual1 = x
        residual2 = x.permute(0, 2, 1)
        for block1, block2 in zip(self.mixer_blocks1, self.mixer_blocks2):
            x = block1(x) + residual1
            residual1 = x
            x = x.permute(0, 2, 1)

            x = block2(x) + residual2
            residual2 = x
            x = x.permute(0, 2, 1)

        x = x.reshape(x.size(0), -1)
        backbone = self.backbone_linear(x).reshape(len(x), -1, self.clip_size)
        if self.clip_scale > 0:
            c = self.clip_proj(backbone)

        if self.blurry_recon:
            b = self.blin1(x)
            b = self.bdropout(b)
            b = b.reshape(b.shape[0], -1, 7, 7).contiguous()
            b = self.bnorm(b)
            b_aux = self.b_maps_projector(b).flatten(2).permute(0, 2, 1)
            b_aux = b_aux.view(len(b_aux), 49, 512)
            b = (self.bupsampler(b), b_aux)

        return backbone, c, b


class Attention(nn.Module):
    """Multi-head attention for the prior transformer; xformers kernel when available."""

    def __init__(self, dim, *, dim_head=64, heads=8, dropout=0., causal=False, rotary_emb=None,
                 cosine_sim=True, cosine_sim_scale=16, use_xformers=True):
        super().__init__()
        self.scale = cosine_sim_scale if cosine_sim else (dim_head ** -0.5)
        self.cosine_sim = cosine_sim
        self.heads = heads
        inner_dim = dim_head * heads
        self.causal = causal
        self.norm = LayerNorm(dim)
        self.dropout = dropout
        self.null_kv = nn.Parameter(torch.randn(2, dim_head))
        self.to_q = nn.Linear(dim, inner_dim, bias=False)
        self.to_kv = nn.Linear(dim, dim_head * 2, bias=False)
        self.rotary_emb = rotary_emb
        self.use_xformers = use_xformers
        self.to_out = nn.Sequential(nn.Linear(inner_dim, dim, bias=False), LayerNorm(dim))

    def forward(self, x, mask=None, attn_bias=None):
        b, n = x.shape[:2]
        x = self.norm(x)
        q, k, v = (self.to_q(x), *self.to_kv(x).chunk(2, dim=-1))
        q = rearrange(q, 'b n (h d) -> b h n d', h=self.heads)

        if exists(self.rotary_emb):
            q, k = map(self.rotary_emb.rotate_queries_or_keys, (q, k))

        # add null key / value for classifier free guidance in prior net
        nk, nv = map(lambda t: t.reshape(1, 1, -1).expand(b, 1, -1), self.null_kv.unbind(dim=-2))
        k = torch.cat((nk, k), dim=-2)
        v = torch.cat((nv, v), dim=-2)

        if self.cosine_sim:
            q, k = map(l2norm, (q, k))
        q, k = map(lambda t: t * math.sqrt(self.scale), (q, k))

        if self.use_xformers and XFORMERS_AVAILABLE and q.is_cuda and attn_bias is None and mask is None:
            # xformers expects (B, N, H, D); single shared k/v head
            qx = rearrange(q, 'b h n d -> b n h d')
            kx = k.unsqueeze(2).expand(-1, -1, self.heads, -1)
            vx = v.unsqueeze(2).expand(-1, -1, self.heads, -1)
            out = xops.memory_efficient_attention(
                qx, kx, vx, scale=1.0,
                attn_bias=xops.LowerTriangularMask() if self.causal else None,
                p=self.dropout if self.training else 0.0,
            )
            out = rearrange(out, 'b n h d -> b n (h d)')
            return self.to_out(out)

        k = k.unsqueeze(1).expand(-1, self.heads, -1, -1)
        v = v.unsqueeze(1).expand(-1, self.heads, -1, -1)
        attn_mask = None
        if exists(mask):
            attn_mask = F.pad(mask, (1, 0), value=True)[:, None, None, :]
        if exists(attn_bias):
            attn_mask = attn_bias if attn_mask is None else attn_bias.masked_fill(~attn_mask, -torch.finfo(q.dtype).max)
        with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True):
            out = F.scaled_dot_product_attention(
                q, k, v, attn_mask=attn_mask, dropout_p=self.dropout if self.training else 0.0,
                is_causal=self.causal and attn_mask is None, scale=1.0,
            )
        out = rearrange(out, 'b h n d -> b n (h d)')
        return self.to_out(out)


class FlaggedCausalTransformer(nn.Module):
    def __init__(self, *, dim, depth, dim_head=64, heads=8, ff_mult=4, norm_in=False, norm_out=True,
                 attn_dropout=0., ff_dropout=0., final_proj=True, normformer=False, rotary_emb=True,
                 causal=True):
        super().__init__()
        self.init_norm = LayerNorm(dim) if norm_in else nn.Identity()
        self.rel_pos_bias = None
        rotary_emb = RotaryEmbedding(dim=min(32, dim_head)) if rotary_emb else None
        self.layers = nn.ModuleList([])
        for _ in range(depth):
            self.layers.append(nn.ModuleList([
                Attention(dim=dim, causal=causal, dim_head=dim_head, heads=heads, dropout=attn_dropout,
                          rotary_emb=rotary_emb),
                FeedForward(dim=dim, mult=ff_mult, dropout=ff_dropout, post_activation_norm=normformer),
            ]))
        self.norm = LayerNorm(dim, stable=True) if norm_out else nn.Identity()
        self.project_out = nn.Linear(dim, dim, bias=False) if final_proj else nn.Identity()

    def forward(self, x):
        x = self.init_norm(x)
        for attn, ff in self.layers:
            x = attn(x) + x
            x = ff(x) + x
        out = self.norm(x)
        return self.project_out(out)


class PriorNetwork(nn.Module):
    def __init__(self, dim, num_timesteps=None, num_time_embeds=1, num_tokens=257, causal=True,
                 learned_query_mode='none', **kwargs):
        super().__init__()
        self.dim = dim
        self.num_time_embeds = num_time_embeds
        self.continuous_embedded_time = not exists(num_timesteps)
        self.learned_query_mode = learned_query_mode

        self.to_time_embeds = nn.Sequential(
            nn.Embedding(num_timesteps, dim * num_time_embeds) if exists(num_timesteps)
            else nn.Sequential(SinusoidalPosEmb(dim), MLP(dim, dim * num_time_embeds)),
            nn.Unflatten(-1, (num_time_embeds, dim)),
        )
        if self.learned_query_mode == 'token':
            self.learned_query = nn.Parameter(torch.randn(num_tokens, dim))
        if self.learned_query_mode == 'pos_emb':
            scale = dim ** -0.5
            self.learned_query = nn.Parameter(torch.randn(num_tokens, dim) * scale)
        if self.learned_query_mode == 'all_pos_emb':
            scale = dim ** -0.5
            self.learned_query = nn.Parameter(torch.randn(num_tokens * 2 + 1, dim) * scale)
        self.causal_transformer = FlaggedCausalTransformer(dim=dim, causal=causal, **kwargs)

        self.null_brain_embeds = nn.Parameter(torch.randn(num_tokens, dim))
        self.null_image_embed = nn.Parameter(torch.randn(num_tokens, dim))
        self.num_tokens = num_tokens
        self.self_cond = False

    def forward(self, image_embed, diffusion_timesteps, *, self_cond=None, brain_embed=None, text_embed=None,
                brain_cond_drop_prob=0., text_cond_drop_prob=None, image_cond_drop_prob=0.):
        if text_embed is not None:
            brain_embed = text_embed
        if text_cond_drop_prob is not None:
            brain_cond_drop_prob = text_cond_drop_prob

        image_embed = image_embed.view(len(image_embed), -1, self.dim)
        brain_embed = brain_embed.view(len(brain_embed), -1, self.dim)

        batch, _, dim, dtype = *image_embed.shape, image_embed.dtype
        device = image_embed.device

        # classifier free guidance masks
        brain_keep_mask = torch.rand(batch, device=device) > brain_cond_drop_prob
        brain_keep_mask = rearrange(brain_keep_mask, 'b -> b 1 1')
        image_keep_mask = torch.rand(batch, device=device) > image_cond_drop_prob
        image_keep_mask = rearrange(image_keep_mask, 'b -> b 1 1')

        null_brain_embeds = self.null_brain_embeds.to(brain_embed.dtype)
        brain_embed = torch.where(brain_keep_mask, brain_embed, null_brain_embeds[None])
        null_image_embed = self.null_image_embed.to(image_embed.dtype)
        image_embed = torch.where(image_keep_mask, image_embed, null_image_embed[None])

        if self.continuous_embedded_time:
            diffusion_timesteps = diffusion_timesteps.type(dtype)
        time_embed = self.to_time_embeds(diffusion_timesteps)

        if self.learned_query_mode == 'pos_emb':
            pos_embs = self.learned_query[torch.arange(self.num_tokens, device="cuda")]
            image_embed = image_embed + pos_embs[None]
            learned_queries = torch.empty((batch, 0, dim), device=brain_embed.device)
        else:
            learned_queries = self.learned_query.unsqueeze(0).expand(batch, -1, -1)

        tokens = torch.cat((brain_embed, time_embed, image_embed, learned_queries), dim=-2)
        tokens = self.causal_transformer(tokens)
        pred_image_embed = tokens[..., -self.num_tokens:, :]
        return pred_image_embed


class BrainDiffusionPrior(DiffusionPrior):
    """DiffusionPrior from dalle2-pytorch with the brain embedding as the conditioning 'text'."""

    def __init__(self, *args, **kwargs):
        voxel2clip = kwargs.pop('voxel2clip', None)
        super().__init__(*args, **kwargs)
        self.voxel2clip = voxel2clip

    @torch.no_grad()
    def p_sample_loop(self, *args, timesteps=None, **kwargs):
        timesteps = default(timesteps, self.noise_scheduler.num_timesteps)
        assert timesteps <= self.noise_scheduler.num_timesteps
        is_ddim = timesteps < self.noise_scheduler.num_timesteps
        if not is_ddim:
            normalized_image_embed = self.p_sample_loop_ddpm(*args, **kwargs)
        else:
            normalized_image_embed = self.p_sample_loop_ddim(*args, **kwargs, timesteps=timesteps)
        image_embed = normalized_image_embed / self.image_embed_scale
        return image_embed
