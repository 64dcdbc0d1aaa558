# --------------------------------------------------------
# HyperSIGMA spatial ViT with sparse sampling attention (SSA).
# The sampling step follows Deformable-DETR's multi-scale deformable attention;
# the compiled op from ./ops is used when it was built, otherwise a pure PyTorch
# implementation (grid_sample) is used.
# --------------------------------------------------------
import math
import warnings
from functools import partial

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint as cp
from timm.models.layers import DropPath, to_2tuple, trunc_normal_

try:
    from .ops.functions import MSDeformAttnFunction  # built with `cd model/ops && sh make.sh`
    HAS_MSDA = True
except ImportError:
    warnings.warn('MultiScaleDeformableAttention is not compiled, falling back to the PyTorch sampler (slower).')
    HAS_MSDA = False


def ms_deform_attn_core_pytorch(value, value_spatial_shapes, sampling_locations, attention_weights):
    # for debug and test only,
    # need to use cuda version instead
    N_, S_, M_, D_ = value.shape
    _, Lq_, M_, L_, P_, _ = sampling_locations.shape
    value_list = value.split([H_ * W_ for H_, W_ in value_spatial_shapes], dim=1)
    sampling_grids = 2 * sampling_locations - 1
    sampling_value_list = []
    for lid_, (H_, W_) in enumerate(value_spatial_shapes):
        # N_, H_*W_, M_, D_ -> N_, H_*W_, M_*D_ -> N_, M_*D_, H_*W_ -> N_*M_, D_, H_, W_
        value_l_ = value_list[lid_].flatten(2).transpose(1, 2).reshape(N_ * M_, D_, H_, W_)
        # N_, Lq_, M_, P_, 2 -> N_, M_, Lq_, P_, 2 -> N_*M_, Lq_, P_, 2
        sampling_grid_l_ = sampling_grids[:, :, :, lid_].transpose(1, 2).flatten(0, 1)
        # N_*M_, D_, Lq_, P_
        sampling_value_l_ = F.grid_sample(value_l_, sampling_grid_l_,
                                          mode='bilinear', padding_mode='zeros', align_corners=False)
        sampling_value_list.append(sampling_value_l_)
    # (N_, Lq_, M_, L_, P_) -> (N_, M_, Lq_, L_, P_) -> (N_, M_, 1, Lq_, L_*P_)
    attention_weights = attention_weights.transpose(1, 2).reshape(N_ * M_, 1, Lq_, L_ * P_)
    output = (torch.stack(sampling_value_list, dim=-2).flatten(-2) * attention_weights).sum(-1).view(N_, M_ * D_, Lq_)
    return output.transpose(1, 2).contiguous()


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
    """Plain global attention, used in the first blocks."""

    def __init__(self, dim, num_heads=8, qkv_bias=False, qk_scale=None, attn_drop=0., proj_drop=0.):
        super().__init__()
        self.num_heads = num_heads
        head_dim = dim // num_heads
        self.scale = qk_scale or head_dim ** -0.5
        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.attn_drop = nn.Dropout(attn_drop)
        self.proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Dropout(proj_drop)

    def forward(self, x, H, W):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = (q @ k.transpose(-2, -1)) * self.scale
        attn = attn.softmax(dim=-1)
        attn = self.attn_drop(attn)
        x = (attn @ v).transpose(1, 2).reshape(B, N, C)
        x = self.proj(x)
        x = self.proj_drop(x)
        return x


class SampleAttention(nn.Module):
    """Sparse sampling attention: every query attends to n_points learned locations."""

    def __init__(self, dim, num_heads=8, n_points=8, qkv_bias=False, attn_drop=0., proj_drop=0.):
        super().__init__()
        self.num_heads = num_heads
        self.n_points = n_points
        self.n_levels = 1
        self.im2col_step = 64
        self.sampling_offsets = nn.Linear(dim, num_heads * n_points * 2)
        self.attention_weights = nn.Linear(dim, num_heads * n_points)
        self.value_proj = nn.Linear(dim, dim, bias=qkv_bias)
        self.output_proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Dropout(proj_drop)
        self._reset_parameters()

    def _reset_parameters(self):
        nn.init.constant_(self.sampling_offsets.weight.data, 0.)
        thetas = torch.arange(self.num_heads, dtype=torch.float32) * (2.0 * math.pi / self.num_heads)
        grid_init = torch.stack([thetas.cos(), thetas.sin()], -1)
        grid_init = (grid_init / grid_init.abs().max(-1, keepdim=True)[0]).view(self.num_heads, 1, 2).repeat(1, self.n_points, 1)
        for i in range(self.n_points):
            grid_init[:, i, :] *= i + 1
        with torch.no_grad():
            self.sampling_offsets.bias = nn.Parameter(grid_init.view(-1))
        nn.init.constant_(self.attention_weights.weight.data, 0.)
        nn.init.constant_(self.attention_weights.bias.data, 0.)
        nn.init.xavier_uniform_(self.value_proj.weight.data)
        nn.init.xavier_uniform_(self.output_proj.weight.data)
        nn.init.constant_(self.output_proj.bias.data, 0.)

    @staticmethod
    def get_reference_points(H, W, device):
        ref_y, ref_x = torch.meshgrid(
            torch.linspace(0.5, H - 0.5, H, dtype=torch.float32, device=device),
            torch.linspace(0.5, W - 0.5, W, dtype=torch.float32, device=device))
        ref = torch.stack((ref_x.reshape(-1) / W, ref_y.reshape(-1) / H), -1)
        return ref[None, :, None]  # 1, HW, 1(level), 2

    def forward(self, x, H, W):
        B, N, C = x.shape
        value = self.value_proj(x).view(B, N, self.num_heads, C // self.num_heads)
        reference_points = self.get_reference_points(H, W, x.device)
        spatial_shapes = torch.as_tensor([(H, W)], dtype=torch.long, device=x.device)
        level_start_index = spatial_shapes.new_zeros((1,))

        # offsets / weights / sampling are kept in fp32: bilinear sampling with
        # half-precision locations drifts by whole pixels on 64x64 inputs
        with torch.cuda.amp.autocast(enabled=False):
            offsets = self.sampling_offsets(x.float()).view(B, N, self.num_heads, self.n_levels, self.n_points, 2)
            weights = self.attention_weights(x.float()).view(B, N, self.num_heads, self.n_levels * self.n_points)
            weights = weights.softmax(-1).view(B, N, self.num_heads, self.n_levels, self.n_points)
            normalizer = torch.stack([spatial_shapes[..., 1], spatial_shapes[..., 0]], -1)
            sampling_locations = reference_points[:, :, None, :, None, :] \
                + offsets / normalizer[None, None, None, :, None, :]
            if HAS_MSDA and value.is_cuda:
                out = MSDeformAttnFunction.apply(value.float(), spatial_shapes, level_start_index,
                                                 sampling_locations, weights, self.im2col_step)
            else:
                out = ms_deform_attn_core_pytorch(value.float(), [(H, W)], sampling_locations, weights)
        out = self.output_proj(out.to(x.dtype))
        return self.proj_drop(out)


class Block(nn.Module):
    def __init__(self, dim, num_heads, mlp_ratio=4., qkv_bias=False, qk_scale=None, drop=0., attn_drop=0.,
                 drop_path=0., act_layer=nn.GELU, norm_layer=nn.LayerNorm, sample=False, n_points=8):
        super().__init__()
        self.norm1 = norm_layer(dim)
        if sample:
            self.attn = SampleAttention(dim, num_heads=num_heads, n_points=n_points, qkv_bias=qkv_bias,
                                        attn_drop=attn_drop, proj_drop=drop)
        else:
            self.attn = Attention(dim, num_heads=num_heads, qkv_bias=qkv_bias, qk_scale=qk_scale,
                                  attn_drop=attn_drop, proj_drop=drop)
        self.drop_path = DropPath(drop_path) if drop_path > 0. else nn.Identity()
        self.norm2 = norm_layer(dim)
        mlp_hidden_dim = int(dim * mlp_ratio)
        self.mlp = Mlp(in_features=dim, hidden_features=mlp_hidden_dim, act_layer=act_layer, drop=drop)

    def forward(self, x, H, W):
        x = x + self.drop_path(self.attn(self.norm1(x), H, W))
        x = x + self.drop_path(self.mlp(self.norm2(x)))
        return x


class PatchEmbed(nn.Module):
    """ Hyperspectral cube to patch embedding """

    def __init__(self, img_size=64, patch_size=8, in_chans=100, embed_dim=768):
        super().__init__()
        img_size = to_2tuple(img_size)
        patch_size = to_2tuple(patch_size)
        num_patches = (img_size[1] // patch_size[1]) * (img_size[0] // patch_size[0])
        self.patch_shape = (img_size[0] // patch_size[0], img_size[1] // patch_size[1])
        self.img_size = img_size
        self.patch_size = patch_size
        self.num_patches = num_patches
        self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)

    def forward(self, x, **kwargs):
        B, C, H, W = x.shape
        x = self.proj(x)
        Hp, Wp = x.shape[2], x.shape[3]
        x = x.flatten(2).transpose(1, 2)
        return x, (Hp, Wp)


class SpatViT(nn.Module):
    def __init__(self, img_size=64, patch_size=8, in_chans=100, num_classes=0, embed_dim=768, depth=12,
                 num_heads=12, mlp_ratio=4., qkv_bias=True, qk_scale=None, drop_rate=0., attn_drop_rate=0.,
                 drop_path_rate=0.1, norm_layer=partial(nn.LayerNorm, eps=1e-6), n_points=8,
                 out_indices=(3, 5, 7, 11), use_checkpoint=False, interval=3):
        super().__init__()
        self.num_classes = num_classes
        self.num_features = self.embed_dim = embed_dim
        self.use_checkpoint = use_checkpoint
        self.out_indices = out_indices

        self.patch_embed = PatchEmbed(img_size=img_size, patch_size=patch_size, in_chans=in_chans, embed_dim=embed_dim)
        num_patches = self.patch_embed.num_patches
        self.pos_embed = nn.Parameter(torch.zeros(1, num_patches, embed_dim))
        self.pos_drop = nn.Dropout(p=drop_rate)

        dpr = [x.item() for x in torch.linspace(0, drop_path_rate, depth)]  # stochastic depth decay rule
        self.blocks = nn.ModuleList([
            Block(dim=embed_dim, num_heads=num_heads, mlp_ratio=mlp_ratio, qkv_bias=qkv_bias, qk_scale=qk_scale,
                  drop=drop_rate, attn_drop=attn_drop_rate, drop_path=dpr[i], norm_layer=norm_layer,
                  sample=((i + 1) % interval != 0), n_points=n_points)
            for i in range(depth)])
        self.norm = norm_layer(embed_dim)
        self.head = nn.Linear(embed_dim, num_classes) if num_classes > 0 else nn.Identity()

        trunc_normal_(self.pos_embed, std=.02)
        self.apply(self._init_weights)

    def _init_weights(self, m):
        if isinstance(m, nn.Linear):
            trunc_normal_(m.weight, std=.02)
            if isinstance(m, nn.Linear) and m.bias is not None:
                nn.init.constant_(m.bias, 0)
        elif isinstance(m, nn.LayerNorm):
            nn.init.constant_(m.bias, 0)
            nn.init.constant_(m.weight, 1.0)

    def init_weights(self, pretrained=None):
        if isinstance(pretrained, str):
            checkpoint = torch.load(pretrained, map_location='cpu')
            state_dict = checkpoint.get('model', checkpoint)
            # drop decoder / mask token weights from the MAE checkpoint
            state_dict = {k: v for k, v in state_dict.items() if not k.startswith(('decoder', 'mask_token'))}
            if 'pos_embed' in state_dict and state_dict['pos_embed'].shape != self.pos_embed.shape:
                state_dict['pos_embed'] = self.resize_pos_embed(state_dict['pos_embed'], self.patch_embed.patch_shape)
            msg = self.load_state_dict(state_dict, strict=False)
            print(msg)

    @staticmethod
    def resize_pos_embed(pos_embed, new_shape):
        n = pos_embed.shape[1]
        old = int(math.sqrt(n))
        pe = pos_embed.reshape(1, old, old, -1).permute(0, 3, 1, 2)
        pe = F.interpolate(pe, size=new_shape, mode='bicubic', align_corners=False)
        return pe.permute(0, 2, 3, 1).flatten(1, 2)

    @torch.jit.ignore
    def no_weight_decay(self):
        return {'pos_embed'}

    def forward_features(self, x):
        B = x.shape[0]
        x, (Hp, Wp) = self.patch_embed(x)
        x = x + self.pos_embed
        x = self.pos_drop(x)
        features = []
        for i, blk in enumerate(self.blocks):
            if self.use_checkpoint:
                x = cp.checkpoint(blk, x, Hp, Wp)
            else:
                x = blk(x, Hp, Wp)
            if i in self.out_indices:
                features.append(x.transpose(1, 2).reshape(B, -1, Hp, Wp))
        return self.norm(x), features

    def forward(self, x):
        x, _ = self.forward_features(x)
        return self.head(x.mean(1))


def spat_vit_b(**kwargs):
    return SpatViT(embed_dim=768, depth=12, num_heads=12, mlp_ratio=4, qkv_bias=True, **kwargs)


def spat_vit_l(**kwargs):
    return SpatViT(embed_dim=1024, depth=24, num_heads=16, mlp_ratio=4, qkv_bias=True,
                   out_indices=(7, 11, 15, 23), **kwargs)
