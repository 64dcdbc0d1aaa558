# Audio Mamba (AuM): bidirectional state-space model over spectrogram patches.
# Block structure follows Vision Mamba (Vim): Add -> LN -> Mixer, with the residual kept in fp32.
import math
from functools import partial
from typing import Optional

import torch
import torch.nn as nn
from torch import Tensor
from timm.models.layers import DropPath, trunc_normal_, to_2tuple

from mamba_ssm.modules.mamba_simple import Mamba
from mamba_ssm.utils.generation import InferenceParams

try:
    from mamba_ssm.ops.triton.layernorm import RMSNorm, layer_norm_fn, rms_norm_fn
except ImportError:
    RMSNorm, layer_norm_fn, rms_norm_fn = None, None, None


class PatchEmbed(nn.Module):
    """ 2D spectrogram to patch embedding (frequency x time). """

    def __init__(self, spec_size=(128, 1024), patch_size=16, stride=16, in_chans=1, embed_dim=768,
                 norm_layer=None, flatten=True):
        super().__init__()
        spec_size = to_2tuple(spec_size)
        patch_size = to_2tuple(patch_size)
        stride = to_2tuple(stride)
        self.spec_size = spec_size
        self.patch_size = patch_size
        self.grid_size = ((spec_size[0] - patch_size[0]) // stride[0] + 1,
                          (spec_size[1] - patch_size[1]) // stride[1] + 1)
        self.num_patches = self.grid_size[0] * self.grid_size[1]
        self.flatten = flatten
        self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=stride)
        self.norm = norm_layer(embed_dim) if norm_layer else nn.Identity()

    def forward(self, x):
        x = self.proj(x)
        if self.flatten:
            x = x.flatten(2).transpose(1, 2)  # BCHW -> BNC
        x = self.norm(x)
        return x


class RMSNormTorch(nn.Module):
    """Plain PyTorch RMSNorm, used by the non-fused evaluation path."""

    def __init__(self, hidden_size, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(hidden_size))

    def forward(self, x):
        var = x.float().pow(2).mean(-1, keepdim=True)
        x = x.float() * torch.rsqrt(var + self.eps)
        return (x * self.weight.float()).to(self.weight.dtype)


class Block(nn.Module):
    def __init__(self, dim, mixer_cls, norm_cls=nn.LayerNorm, fused_add_norm=False,
                 residual_in_fp32=False, drop_path=0.):
        super().__init__()
        self.residual_in_fp32 = residual_in_fp32
        self.fused_add_norm = fused_add_norm
        self.mixer = mixer_cls(dim)
        self.norm = norm_cls(dim)
        self.drop_path = DropPath(drop_path) if drop_path > 0. else nn.Identity()
        if self.fused_add_norm:
            assert RMSNorm is not None, "RMSNorm import fails"
            assert isinstance(self.norm, (nn.LayerNorm, RMSNorm)), \
                "Only LayerNorm and RMSNorm are supported for fused_add_norm"

    def forward(self, hidden_states: Tensor, residual: Optional[Tensor] = None,
                inference_params=None):
        if not self.fused_add_norm:
            if residual is None:
                residual = hidden_states
            else:
                residual = residual + self.drop_path(hidden_states)
            hidden_states = self.norm(residual.to(dtype=self.norm.weight.dtype))
            if self.residual_in_fp32:
                residual = residual.to(torch.float32)
        else:
            fused_add_norm_fn = rms_norm_fn if isinstance(self.norm, RMSNorm) else layer_norm_fn
            if residual is None:
                hidden_states, residual = fused_add_norm_fn(
                    hidden_states, self.norm.weight, self.norm.bias, residual=residual,
                    prenorm=True, residual_in_fp32=self.residual_in_fp32, eps=self.norm.eps)
            else:
                hidden_states, residual = fused_add_norm_fn(
                    self.drop_path(hidden_states), self.norm.weight, self.norm.bias,
                    residual=residual, prenorm=True, residual_in_fp32=self.residual_in_fp32,
                    eps=self.norm.eps)
        hidden_states = self.mixer(hidden_states, inference_params=inference_params)
        return hidden_states, residual

    def allocate_inference_cache(self, batch_size, max_seqlen, dtype=None, **kwargs):
        return self.mixer.allocate_inference_cache(batch_size, max_seqlen, dtype=dtype, **kwargs)


def create_block(d_model, ssm_cfg=None, norm_epsilon=1e-5, drop_path=0., rms_norm=True,
                 residual_in_fp32=True, fused_add_norm=True, layer_idx=None, device=None,
                 dtype=None, bimamba_type="v2", if_devide_out=True, init_layer_scale=None):
    if ssm_cfg is None:
        ssm_cfg = {}
    factory_kwargs = {"device": device, "dtype": dtype}
    mixer_cls = partial(Mamba, layer_idx=layer_idx, bimamba_type=bimamba_type,
                        if_devide_out=if_devide_out, init_layer_scale=init_layer_scale,
                        **ssm_cfg, **factory_kwargs)
    norm_cls = partial(nn.LayerNorm if not rms_norm else RMSNorm, eps=norm_epsilon, **factory_kwargs)
    block = Block(d_model, mixer_cls, norm_cls=norm_cls, drop_path=drop_path,
                  fused_add_norm=fused_add_norm, residual_in_fp32=residual_in_fp32)
    block.layer_idx = layer_idx
    return block


def _init_weights(module, n_layer, initializer_range=0.02, rescale_prenorm_residual=True,
                  n_residuals_per_layer=1):
    if isinstance(module, nn.Linear):
        if module.bias is not None:
            if not getattr(module.bias, "_no_reinit", False):
                nn.init.zeros_(module.bias)
    elif isinstance(module, nn.Embedding):
        nn.init.normal_(module.weight, std=initializer_range)

    if rescale_prenorm_residual:
        for name, p in module.named_parameters():
            if name in ["out_proj.weight", "fc2.weight"]:
                nn.init.kaiming_uniform_(p, a=math.sqrt(5))
                with torch.no_grad():
                    p /= math.sqrt(n_residuals_per_layer * n_layer)


class AudioMamba(nn.Module):
    def __init__(self, spec_size=(128, 1024), patch_size=16, stride=16, depth=24, embed_dim=192,
                 channels=1, num_classes=527, ssm_cfg=None, drop_rate=0., drop_path_rate=0.1,
                 norm_epsilon: float = 1e-5, rms_norm: bool = True, initializer_cfg=None,
                 fused_add_norm=True, residual_in_fp32=True, device=None, dtype=None,
                 use_middle_cls_token=True, bimamba_type="v2", if_devide_out=True, **kwargs):
        factory_kwargs = {"device": device, "dtype": dtype}
        kwargs.update(factory_kwargs)
        super().__init__()
        self.residual_in_fp32 = residual_in_fp32
        self.fused_add_norm = fused_add_norm
        self.use_middle_cls_token = use_middle_cls_token
        self.num_classes = num_classes
        self.d_model = self.num_features = self.embed_dim = embed_dim

        self.patch_embed = PatchEmbed(spec_size=spec_size, patch_size=patch_size, stride=stride,
                                      in_chans=channels, embed_dim=embed_dim)
        num_patches = self.patch_embed.num_patches
        self.cls_token = nn.Parameter(torch.zeros(1, 1, self.embed_dim))
        self.pos_embed = nn.Parameter(torch.zeros(1, num_patches + 1, self.embed_dim))
        self.pos_drop = nn.Dropout(p=drop_rate)
        self.head = nn.Linear(self.num_features, num_classes) if num_classes > 0 else nn.Identity()

        dpr = [x.item() for x in torch.linspace(0, drop_path_rate, depth)]
        self.layers = nn.ModuleList([
            create_block(embed_dim, ssm_cfg=ssm_cfg, norm_epsilon=norm_epsilon, rms_norm=rms_norm,
                         residual_in_fp32=residual_in_fp32, fused_add_norm=fused_add_norm,
                         layer_idx=i, bimamba_type=bimamba_type, drop_path=dpr[i],
                         if_devide_out=if_devide_out, **factory_kwargs)
            for i in range(depth)])
        self.norm_f = (nn.LayerNorm if not rms_norm else RMSNorm)(embed_dim, eps=norm_epsilon, **factory_kwargs)

        self.patch_embed.apply(self._init_patch)
        trunc_normal_(self.pos_embed, std=.02)
        trunc_normal_(self.cls_token, std=.02)
        self.apply(partial(_init_weights, n_layer=depth, **(initializer_cfg if initializer_cfg is not None else {})))

    @staticmethod
    def _init_patch(m):
        if isinstance(m, nn.Conv2d):
            nn.init.xavier_uniform_(m.weight.view(m.weight.size(0), -1))

    def allocate_inference_cache(self, batch_size, max_seqlen, dtype=None, **kwargs):
        return {i: layer.allocate_inference_cache(batch_size, max_seqlen, dtype=dtype, **kwargs)
                for i, layer in enumerate(self.layers)}

    def forward_features(self, x, inference_params=None):
        x = self.patch_embed(x)
        B, M, _ = x.shape
        cls_token = self.cls_token.expand(B, -1, -1)
        token_position = M // 2 if self.use_middle_cls_token else 0
        x = torch.cat((x[:, :token_position, :], cls_token, x[:, token_position:, :]), dim=1)
        x = self.pos_drop(x + self.pos_embed)

        residual = None
        hidden_states = x
        for layer in self.layers:
            hidden_states, residual = layer(hidden_states, residual, inference_params=inference_params)

        if not self.fused_add_norm:
            residual = hidden_states if residual is None else residual + hidden_states
            hidden_states = self.norm_f(residual.to(dtype=self.norm_f.weight.dtype))
        else:
            fused_add_norm_fn = rms_norm_fn if isinstance(self.norm_f, RMSNorm) else layer_norm_fn
            hidden_states = fused_add_norm_fn(
                hidden_states, self.norm_f.weight, self.norm_f.bias, eps=self.norm_f.eps,
                residual=residual, prenorm=False, residual_in_fp32=self.residual_in_fp32)
        return hidden_states[:, token_position, :]

    def forward(self, x, return_features=False, inference_params=None):
        # x: (B, T, F) log-mel -> (B, 1, F, T)
        x = x.transpose(1, 2).unsqueeze(1)
        x = self.forward_features(x, inference_params)
        if return_features:
            return x
        return self.head(x)


def aum_base(num_classes=527, **kwargs):
    return AudioMamba(patch_size=16, stride=16, embed_dim=768, depth=24, rms_norm=True,
                      residual_in_fp32=True, fused_add_norm=True, num_classes=num_classes,
                      bimamba_type="v2", if_devide_out=True, use_middle_cls_token=True, **kwargs)


def aum_small(num_classes=527, **kwargs):
    return AudioMamba(patch_size=16, stride=16, embed_dim=384, depth=24, rms_norm=True,
                      fused_add_norm=True, residual_in_fp32=True, num_classes=num_classes,
                      bimamba_type="v2", if_devide_out=True, use_middle_cls_token=True, **kwargs)
