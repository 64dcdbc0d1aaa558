import os
import numpy as np
from collections import namedtuple
from functools import partial, wraps
from packaging import version
import torch
import torch.nn as nn
import torch.nn.functional as F
from einops import rearrange, repeat
from dalle2_pytorch import DiffusionPrior
from dalle2_pytorch.dalle2_pytorch import l2norm, default, exists, SinusoidalPosEmb, MLP, Rearrange, prob_mask_like, LayerNorm, RelPosBias, FeedForward, RotaryEmbedding

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
        out = torch.cat([self.linears[subj_idx](x[:,seq]).unsqueeze(1) for seq in range(self.seq_len)], dim=1)
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
        if self.clip_scale>0:
            self.clip_proj = self.projector(clip_size, clip_size, h=clip_size)

        if self.blurry_recon:
            self.blin1 = nn.Linear(h*seq_len,4*28*28,bias=True)
            self.bdropout = nn.Dropout(.3)
            self.bnorm = nn.GroupNorm(1, 64)
            self.bupsampler = Decoder(in_channels=64, out_channels=4,
                up_block_types=["UpDecoderBlock2D","UpDecoderBlock2D","UpDecoderBlock2D"],
                block_out_channels=[32, 64, 128], layers_per_block=1)

    def projector(self, in_dim, out_dim, h=2048):
        return nn.Sequential(
            nn.LayerNorm(in_dim),
            nn.GELU(),
            nn.Linear(in_dim, h),
            nn.LayerNorm(h),
            nn.GELU(),
            nn.Linear(h, h),
            nn.LayerNorm(h),
            nn.GELU(),
            nn.Linear(h, out_dim)
        )
    
    def mlp(self, in_dim, out_dim, drop):
        return nn.Sequential(
            nn.Linear(in_dim, out_dim),
            nn.GELU(),
            nn.Dropout(drop),
            nn.Linear(out_dim, out_dim),
        )
    
    def mixer_block1(self, h, drop):
        return nn.Sequential(
            nn.LayerNorm(h),
            self.mlp(h, h, drop),  # Token mixing
        )

    def mixer_block2(self, seq_len, drop):
        return nn.Sequential(
            nn.LayerNorm(seq_len),
            self.mlp(seq_len, seq_len, drop)  # Channel mixing
        )
        
    def forward(self, x):
        # make empty tensors
        c,b,t = torch.Tensor([0.]), torch.Tensor([[0.],[0.]]), torch.Tensor([0.])
        
        # Mixer blocks
        residual1 = x
        residual2 = x.permute(0,2,1)
        for block1, block2 in zip(self.mixer_blocks1,self.mixer_blocks2):
            x = block1(x) + residual1
            residual1 = x
            x = x.permute(0,2,1)
            
            x = block2(x) + residual2
            residual2 = x
            x = x.permute(0,2,1)
            
        x = x.reshape(x.size(0), -1)
        backbone = self.backbone_linear(x).reshape(len(x), -1, self.clip_size)
        if self.clip_scale>0:
            c = self.clip_proj(backbone)

        if self.blurry_recon:
            b = self.bdropout(self.blin1(x))
            b = self.bnorm(b.reshape(b.shape[0], -1, 7, 7).contiguous())
            b = (self.bupsampler(b), b.flatten(2).permute(0,2,1))

        return backbone, c, b

from diffusers.models.vae import Decoder

# -- attention helper adapted from lucidrains' Attend (flash attention when available) --

def once(fn):
    called = False
    @wraps(fn)
    def inner(x):
        nonlocal called
        if called:
            return
        called = True
        return fn(x)
    return inner

print_once = once(print)

class Attend(nn.Module):
    def __init__(self, dropout = 0., causal = False, use_flash = False):
        super().__init__()
        self.dropout = dropout
        self.attn_dropout = nn.Dropout(dropout)

        self.causal = causal
        self.register_buffer("mask", None, persistent=False)

        self.use_flash = use_flash
        assert not (use_flash and version.parse(torch.__version__) < version.parse('2.0.0')), 'in order to use flash attention, you must be using pytorch 2.0 or above'

        # determine efficient attention configs for cuda and cpu
        self.config = namedtuple('EfficientAttentionConfig', ['enable_flash', 'enable_math', 'enable_mem_efficient'])
        self.cpu_config = self.config(True, True, True)
        self.cuda_config = None

        if not torch.cuda.is_available() or not use_flash:
            return

        device_properties = torch.cuda.get_device_properties(torch.device('cuda'))

        if device_properties.major == 8 and device_properties.minor == 0:
            print_once('A100 GPU detected, using flash attention if input tensor is on cuda')
            self.cuda_config = self.config(True, False, False)
        else:
            print_once('Non-A100 GPU detected, using math or mem efficient attention if input tensor is on cuda')
            self.cuda_config = self.config(False, True, True)

    def get_mask(self, n, device):
        if exists(self.mask) and self.mask.shape[-1] >= n:
            return self.mask[:n, :n]
        mask = torch.ones((n, n), device=device, dtype=torch.bool).triu(1)
        self.register_buffer("mask", mask, persistent=False)
        return mask

    def flash_attn(self, q, k, v, mask = None, attn_bias = None):
        _, heads, q_len, _, k_len, is_cuda = *q.shape, k.shape[-2], q.is_cuda

        # single-headed key / values
        if k.ndim == 3:
            k = rearrange(k, 'b n d -> b 1 n d').expand_as(q)
        if v.ndim == 3:
            v = rearrange(v, 'b n d -> b 1 n d').expand_as(q)

        # fold the relative positional bias into the float attention mask
        if exists(attn_bias):
            mask = attn_bias.expand(-1, heads, -1, -1) if attn_bias.ndim == 4 else attn_bias

        config = self.cuda_config if is_cuda else self.cpu_config

        # pytorch 2.0 flash attn: q, k, v, mask, dropout, causal, softmax_scale
        with torch.backends.cuda.sdp_kernel(**config._asdict()):
            out = F.scaled_dot_product_attention(
                q, k, v,
                attn_mask = mask,
                dropout_p = self.dropout if self.training else 0., 
                is_causal = self.causal and not exists(mask)
            )
        return out

    def forward(self, q, k, v, mask = None, attn_bias = None):
        n, device = q.shape[-2], q.device
        scale = q.shape[-1] ** -0.5

        if self.use_flash:
            return self.flash_attn(q, k, v, mask = mask, attn_bias = attn_bias)

        sim = torch.einsum('b h i d, b h j d -> b h i j', q, k) * scale
        if exists(attn_bias):
            sim = sim + attn_bias
        if self.causal:
            causal_mask = self.get_mask(sim.shape[-1], device)
            sim = sim.masked_fill(causal_mask, -torch.finfo(sim.dtype).max)
        attn = sim.softmax(dim=-1)
        attn = self.attn_dropout(attn)
        out = torch.einsum('b h i j, b h j d -> b h i d', attn, v)
        return out

class Attention(nn.Module):
    def __init__(self, dim, *, dim_head = 64, heads = 8, dropout = 0., causal = False, rotary_emb = None, use_flash = True):
        super().__init__()
        self.heads = heads
        inner_dim = dim_head * heads
        self.norm = LayerNorm(dim)
        self.rotary_emb = rotary_emb
        self.to_q = nn.Linear(dim, inner_dim, bias = False)
        self.to_kv = nn.Linear(dim, dim_head * 2, bias = False)
        self.attend = Attend(dropout = dropout, causal = causal, use_flash = use_flash)
        self.to_out = nn.Sequential(nn.Linear(inner_dim, dim, bias = False), LayerNorm(dim))

    def forward(self, x, attn_bias = None):
        x = self.norm(x)
        q, k, v = (self.to_q(x), *self.to_kv(x).chunk(2, dim = -1))
        q = rearrange(q, 'b n (h d) -> b h n d', h = self.heads)
        if exists(self.rotary_emb):
            q, k = map(self.rotary_emb.rotate_queries_or_keys, (q, k))
        out = self.attend(q, k, v, attn_bias = attn_bias)
        out = rearrange(out, 'b h n d -> b n (h d)')
        return self.to_out(out)

class FlaggedCausalTransformer(nn.Module):
    def __init__(self, *, dim, depth, dim_head = 64, heads = 8, ff_mult = 4, norm_in = False, norm_out = True,
                 attn_dropout = 0., ff_dropout = 0., final_proj = True, normformer = False, rotary_emb = True, causal=True):
        super().__init__()
        self.init_norm = LayerNorm(dim) if norm_in else nn.Identity()
        self.rel_pos_bias = RelPosBias(heads = heads)
        rotary_emb = RotaryEmbedding(dim = min(32, dim_head)) if rotary_emb else None
        self.layers = nn.ModuleList([])
        for _ in range(depth):
            self.layers.append(nn.ModuleList([
                Attention(dim = dim, causal = causal, dim_head = dim_head, heads = heads, dropout = attn_dropout, rotary_emb = rotary_emb),
                FeedForward(dim = dim, mult = ff_mult, dropout = ff_dropout, post_activation_norm = normformer)
            ]))
        self.norm = LayerNorm(dim, stable = True) if norm_out else nn.Identity()
        self.project_out = nn.Linear(dim, dim, bias = False) if final_proj else nn.Identity()

    def forward(self, x):
        n, device = x.shape[1], x.device
        x = self.init_norm(x)
        attn_bias = self.rel_pos_bias(n, n + 1, device = device)
        for attn, ff in self.layers:
            x = attn(x, attn_bias = attn_bias) + x
            x = ff(x) + x
        out = self.norm(x)
        return self.project_out(out)

class PriorNetwork(nn.Module):
    def __init__(self, dim, num_timesteps = None, num_time_embeds = 1, num_tokens = 257, causal = True,
                 learned_query_mode = 'none', **kwargs):
        super().__init__()
        self.dim = dim
        self.num_time_embeds = num_time_embeds
        self.continuous_embedded_time = not exists(num_timesteps)
        self.learned_query_mode = learned_query_mode
        self.to_time_embeds = nn.Sequential(
            nn.Embedding(num_timesteps, dim * num_time_embeds) if exists(num_timesteps) else nn.Sequential(SinusoidalPosEmb(dim), MLP(dim, dim * num_time_embeds)),
            Rearrange('b (n d) -> b n d', n = num_time_embeds)
        )
        if self.learned_query_mode == 'pos_emb':
            scale = dim ** -0.5
            self.learned_query = nn.Parameter(torch.randn(num_tokens, dim) * scale)
        self.causal_transformer = FlaggedCausalTransformer(dim = dim, causal=causal, **kwargs)
        self.null_brain_embeds = nn.Parameter(torch.randn(num_tokens, dim))
        self.null_image_embed = nn.Parameter(torch.randn(num_tokens, dim))
        self.num_tokens = num_tokens
        self.self_cond = False

    def forward(self, image_embed, diffusion_timesteps, *, self_cond=None, brain_embed=None, text_embed=None,
                brain_cond_drop_prob = 0., text_cond_drop_prob = None, image_cond_drop_prob = 0.):
        if text_embed is not None:
            brain_embed = text_embed
        if text_cond_drop_prob is not None:
            brain_cond_drop_prob = text_cond_drop_prob
        batch, _, dim, device, dtype = *image_embed.shape, image_embed.device, image_embed.dtype
        brain_keep_mask = rearrange(prob_mask_like((batch,), 1 - brain_cond_drop_prob, device = device), 'b -> b 1 1')
        image_keep_mask = rearrange(prob_mask_like((batch,), 1 - image_cond_drop_prob, device = device), 'b -> b 1 1')
        brain_embed = torch.where(brain_keep_mask, brain_embed, self.null_brain_embeds.to(brain_embed.dtype)[None])
        image_embed = torch.where(image_keep_mask, image_embed, self.null_image_embed.to(image_embed.dtype)[None])
        if self.continuous_embedded_time:
            diffusion_timesteps = diffusion_timesteps.type(dtype)
        time_embed = self.to_time_embeds(diffusion_timesteps)
        if self.learned_query_mode == 'pos_emb':
            image_embed = image_embed + repeat(self.learned_query, 'n d -> b n d', b = batch)
        learned_queries = torch.empty((batch, 0, dim), device=brain_embed.device)
        tokens = torch.cat((brain_embed, time_embed, image_embed, learned_queries), dim = -2)
        tokens = self.causal_transformer(tokens)
        return tokens[..., -self.num_tokens:, :]

class BrainDiffusionPrior(DiffusionPrior):
    """ Same as DiffusionPrior but returns the prediction alongside the loss and accepts generators. """
    def __init__(self, *args, **kwargs):
        voxel2clip = kwargs.pop('voxel2clip', None)
        super().__init__(*args, **kwargs)
        self.voxel2clip = voxel2clip

    def p_losses(self, image_embed, times, text_cond, noise = None):
        noise = default(noise, lambda: torch.randn_like(image_embed))
        image_embed_noisy = self.noise_scheduler.q_sample(x_start = image_embed, t = times, noise = noise)
        pred = self.net(image_embed_noisy, times, self_cond = None,
                        text_cond_drop_prob = self.text_cond_drop_prob,
                        image_cond_drop_prob = self.image_cond_drop_prob, **text_cond)
        if self.predict_x_start and self.training_clamp_l2norm:
            pred = self.l2norm_clamp_embed(pred)
        target = image_embed if self.predict_x_start else noise
        loss = nn.functional.mse_loss(pred, target)
        return loss, pred

    def forward(self, text_embed = None, image_embed = None, *args, **kwargs):
        text_cond = dict(text_embed = text_embed)
        batch = image_embed.shape[0]
        times = self.noise_scheduler.sample_random_times(batch)
        image_embed *= self.image_embed_scale
        return self.p_losses(image_embed, times, text_cond = text_cond, *args, **kwargs)
