"""
One-stream ViT tracker (template + search tokens through a shared ViT, centre head on the search tokens).

Runtime knobs (cfg.MODEL.*):
    ATTN_IMPL      'auto' | 'flash' | 'sdpa' | 'math'   -- 'auto' prefers flash-attn 2, then PyTorch SDPA
    COMPILE        torch.compile the network for inference (PyTorch >= 2.0)
    NVTX           emit NVTX ranges for Nsight Systems
"""
import math
import contextlib
from functools import partial

import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    from flash_attn import flash_attn_func  # flash-attn 2.x, sm80+ only
    _HAS_FLASH_ATTN = True
except ImportError:
    flash_attn_func = None
    _HAS_FLASH_ATTN = False

_HAS_SDPA = hasattr(F, 'scaled_dot_product_attention')
_TORCH_2 = int(torch.__version__.split('.')[0]) >= 2

# TF32 matmuls are fine for tracking accuracy and ~2x faster on Ampere
torch.backends.cuda.matmul.allow_tf32 = True


def get_autocast_dtype():
    """bf16 on Ampere or newer, fp16 otherwise."""
    if torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8:
        return torch.bfloat16
    return torch.float16


class Mlp(nn.Module):
    def __init__(self, in_features, hidden_features=None, out_features=None, act_layer=nn.GELU, drop=0.):
        super().__init__()
        out_features = out_features or in_features
        hidden_features = hidden_features or in_features
        self.fc1 = nn.Linear(in_features, hidden_features)
        self.act = act_layer()
        self.fc2 = nn.Linear(hidden_features, out_features)
        self.drop = nn.Dropout(drop)

    def forward(self, x):
        x = self.fc1(x)
        x = self.act(x)
        x = self.drop(x)
        x = self.fc2(x)
        x = self.drop(x)
        return x


class Attention(nn.Module):
    def __init__(self, dim, num_heads=8, qkv_bias=False, attn_drop=0., proj_drop=0., attn_impl='auto'):
        super().__init__()
        self.num_heads = num_heads
        head_dim = dim // num_heads
        self.scale = head_dim ** -0.5

        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.attn_drop_p = attn_drop
        self.attn_drop = nn.Dropout(attn_drop)
        self.proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Dropout(proj_drop)

        if attn_impl == 'auto':
            attn_impl = 'flash' if _HAS_FLASH_ATTN else ('sdpa' if _HAS_SDPA else 'math')
        self.attn_impl = attn_impl

    def forward(self, x, attn_mask=None):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads)

        if self.attn_impl == 'flash' and attn_mask is None and x.dtype in (torch.float16, torch.bfloat16):
            q, k, v = qkv.unbind(2)  # (B, N, H, D) layout expected by flash-attn
            x = flash_attn_func(q, k, v, dropout_p=self.attn_drop_p if self.training else 0.,
                                softmax_scale=self.scale)
            x = x.reshape(B, N, C)
        else:
            q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)  # (B, H, N, D)
            if self.attn_impl == 'sdpa':
                with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=True):
                    x = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask,
                                                       dropout_p=self.attn_drop_p if self.training else 0.)
            else:
                attn = (q @ k.transpose(-2, -1)) * self.scale
                if attn_mask is not None:
                    attn = attn.masked_fill(~attn_mask, float('-inf'))
                attn = attn.softmax(dim=-1)
                attn = self.attn_drop(attn)
                x = attn @ v
            x = x.transpose(1, 2).reshape(B, N, C)

        x = self.proj(x)
        x = self.proj_drop(x)
        return x


class Block(nn.Module):
    def __init__(self, dim, num_heads, mlp_ratio=4., qkv_bias=False, drop=0., attn_drop=0., drop_path=0.,
                 norm_layer=nn.LayerNorm, attn_impl='auto'):
        super().__init__()
        self.norm1 = norm_layer(dim)
        self.attn = Attention(dim, num_heads=num_heads, qkv_bias=qkv_bias, attn_drop=attn_drop, proj_drop=drop,
                              attn_impl=attn_impl)
        self.drop_path_rate = drop_path
        self.norm2 = norm_layer(dim)
        self.mlp = Mlp(in_features=dim, hidden_features=int(dim * mlp_ratio), drop=drop)

    def drop_path(self, x):
        if self.drop_path_rate == 0. or not self.training:
            return x
        keep_prob = 1 - self.drop_path_rate
        shape = (x.shape[0],) + (1,) * (x.ndim - 1)
        random_tensor = keep_prob + torch.rand(shape, dtype=x.dtype, device=x.device)
        random_tensor.floor_()
        return x.div(keep_prob) * random_tensor

    def forward(self, x, attn_mask=None):
        x = x + self.drop_path(self.attn(self.norm1(x), attn_mask))
        x = x + self.drop_path(self.mlp(self.norm2(x)))
        return x


class PatchEmbed(nn.Module):
    def __init__(self, patch_size=16, in_chans=3, embed_dim=768):
        super().__init__()
        self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)

    def forward(self, x):
        x = self.proj(x)
        return x.flatten(2).transpose(1, 2)  # B, HW, C


class CenterHead(nn.Module):
    """score / size / offset maps on the search tokens"""

    def __init__(self, dim, feat_sz):
        super().__init__()
        self.feat_sz = feat_sz
        self.score = nn.Sequential(nn.Conv2d(dim, 256, 3, padding=1), nn.ReLU(inplace=True), nn.Conv2d(256, 1, 1))
        self.size = nn.Sequential(nn.Conv2d(dim, 256, 3, padding=1), nn.ReLU(inplace=True), nn.Conv2d(256, 2, 1))
        self.offset = nn.Sequential(nn.Conv2d(dim, 256, 3, padding=1), nn.ReLU(inplace=True), nn.Conv2d(256, 2, 1))

    def forward(self, x):
        B, N, C = x.shape
        x = x.transpose(1, 2).reshape(B, C, self.feat_sz, self.feat_sz)
        score_map = self.score(x).sigmoid()
        size_map = self.size(x).sigmoid()
        offset_map = self.offset(x)
        return score_map, size_map, offset_map

    def cal_bbox(self, score_map, size_map, offset_map):
        max_score, idx = torch.max(score_map.flatten(1), dim=1, keepdim=True)
        idx_y = torch.div(idx, self.feat_sz, rounding_mode='floor')
        idx_x = idx % self.feat_sz
        idx = idx.unsqueeze(1).expand(idx.shape[0], 2, 1)
        size = size_map.flatten(2).gather(dim=2, index=idx)
        offset = offset_map.flatten(2).gather(dim=2, index=idx).squeeze(-1)
        bbox = torch.cat([(idx_x.to(torch.float) + offset[:, :1]) / self.feat_sz,
                          (idx_y.to(torch.float) + offset[:, 1:]) / self.feat_sz,
                          size.squeeze(-1)], dim=1)
        return bbox, max_score


class ViTTracker(nn.Module):
    def __init__(self, template_size=128, search_size=256, patch_size=16, embed_dim=768, depth=12, num_heads=12,
                 mlp_ratio=4., drop_path_rate=0.1, attn_impl='auto', use_nvtx=False):
        super().__init__()
        self.patch_embed = PatchEmbed(patch_size, 3, embed_dim)
        self.num_z = (template_size // patch_size) ** 2
        self.num_x = (search_size // patch_size) ** 2
        self.pos_embed_z = nn.Parameter(torch.zeros(1, self.num_z, embed_dim))
        self.pos_embed_x = nn.Parameter(torch.zeros(1, self.num_x, embed_dim))
        dpr = [x.item() for x in torch.linspace(0, drop_path_rate, depth)]
        self.blocks = nn.ModuleList([
            Block(embed_dim, num_heads, mlp_ratio, qkv_bias=True, drop_path=dpr[i], attn_impl=attn_impl)
            for i in range(depth)])
        self.norm = nn.LayerNorm(embed_dim)
        self.head = CenterHead(embed_dim, search_size // patch_size)
        self.use_nvtx = use_nvtx
        nn.init.trunc_normal_(self.pos_embed_z, std=.02)
        nn.init.trunc_normal_(self.pos_embed_x, std=.02)

    def forward(self, template, search):
        if self.use_nvtx:
            torch.cuda.nvtx.range_push("vit_backbone")
        z = self.patch_embed(template) + self.pos_embed_z
        x = self.patch_embed(search) + self.pos_embed_x
        tokens = torch.cat([z, x], dim=1)
        for blk in self.blocks:
            tokens = blk(tokens)
        tokens = self.norm(tokens)
        if self.use_nvtx:
            torch.cuda.nvtx.range_pop()
        score_map, size_map, offset_map = self.head(tokens[:, self.num_z:])
        return {'score_map': score_map, 'size_map': size_map, 'offset_map': offset_map}


def resize_pos_embed(pos_embed, new_hw):
    """Bicubic resize of a (1, H*W, C) positional embedding to (1, h*w, C)."""
    n, l, c = pos_embed.shape
    old = int(math.sqrt(l))
    pe = pos_embed.reshape(n, old, old, c).permute(0, 3, 1, 2)
    pe = F.interpolate(pe.float(), size=new_hw, mode='bicubic', align_corners=False)
    return pe.permute(0, 2, 3, 1).reshape(n, new_hw[0] * new_hw[1], c).to(pos_embed.dtype)


def load_pretrained(model, path, strict=False):
    """Load an MAE / DeiT ImageNet checkpoint into the tracker backbone.

    Checkpoints are always mapped to CPU first so that this works no matter where they were saved."""
    ckpt = torch.load(path, map_location='cpu')
    state_dict = ckpt.get('model', ckpt.get('state_dict', ckpt))
    new_sd = {}
    for k, v in state_dict.items():
        if k.startswith('module.'):
            k = k[len('module.'):]
        if k in ('cls_token', 'head.weight', 'head.bias', 'fc_norm.weight', 'fc_norm.bias'):
            continue
        if k == 'pos_embed':
            v = v[:, 1:] if v.shape[1] % 2 == 1 else v  # drop cls token position
            z_hw = int(math.sqrt(model.num_z))
            x_hw = int(math.sqrt(model.num_x))
            new_sd['pos_embed_z'] = resize_pos_embed(v, (z_hw, z_hw))
            new_sd['pos_embed_x'] = resize_pos_embed(v, (x_hw, x_hw))
            continue
        new_sd[k] = v
    missing, unexpected = model.load_state_dict(new_sd, strict=strict)
    print('load pretrained from %s: %d missing, %d unexpected keys' % (path, len(missing), len(unexpected)))
    return model


def build_vit_tracker(cfg, local_rank=0, training=True):
    model = ViTTracker(template_size=cfg.DATA.TEMPLATE.SIZE, search_size=cfg.DATA.SEARCH.SIZE,
                       embed_dim=cfg.MODEL.EMBED_DIM, depth=cfg.MODEL.DEPTH, num_heads=cfg.MODEL.NUM_HEADS,
                       drop_path_rate=cfg.MODEL.DROP_PATH if training else 0.,
                       attn_impl=getattr(cfg.MODEL, 'ATTN_IMPL', 'auto'),
                       use_nvtx=getattr(cfg.MODEL, 'NVTX', False))
    device = torch.device('cuda', local_rank)
    model = model.to(device)
    if not training and getattr(cfg.MODEL, 'COMPILE', False) and _TORCH_2:
        model = torch.compile(model, mode='max-autotune', dynamic=False)
    return model


class InferenceWrapper(object):
    """Runs the network under autocast for tracking; keeps the output in fp32."""

    def __init__(self, model, use_amp=True):
        self.model = model
        self.use_amp = use_amp
        self.amp_dtype = get_autocast_dtype()

    @torch.no_grad()
    def __call__(self, template, search):
        ctx = torch.autocast(device_type='cuda', dtype=self.amp_dtype) if self.use_amp else contextlib.nullcontext()
        with ctx:
            out = self.model(template, search)
        return {k: v.float() for k, v in out.items()}
