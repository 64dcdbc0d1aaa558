"""
Vision Transformer backbone + Multi-Granularity Prediction heads (A^3 modules) for MGP-STR.

The backbone follows timm's DeiT implementation; weights are initialised from the
ImageNet DeiT checkpoints and the patch embedding is re-shaped for 32x128 text crops.
"""
import logging
import math
from copy import deepcopy
from functools import partial

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint as checkpoint

from timm.models.helpers import load_pretrained
from timm.models.layers import DropPath, Mlp, trunc_normal_
from timm.models.vision_transformer import VisionTransformer, _cfg

_logger = logging.getLogger(__name__)

__all__ = [
    'mgp_str_tiny_patch4_3_32_128',
    'mgp_str_small_patch4_3_32_128',
    'mgp_str_base_patch4_3_32_128',
]

# PyTorch >= 2.0 exposes fused SDPA; older versions fall back to the explicit softmax(QK^T)V path
_HAS_SDPA = hasattr(F, 'scaled_dot_product_attention')


class TokenLearner(nn.Module):
    """A^3 (adaptive addressing and aggregation) module: learns `out_token` queries over the ViT tokens."""

    def __init__(self, input_embed_dim, out_token=30):
        super().__init__()
        self.token_norm = nn.LayerNorm(input_embed_dim)
        self.tokenLearner = nn.Sequential(nn.Conv2d(input_embed_dim, input_embed_dim, kernel_size=(1, 1), stride=1, groups=8, bias=False),
                                          nn.Conv2d(input_embed_dim, out_token, kernel_size=(1, 1), stride=1, bias=False))
        self.feat = nn.Conv2d(input_embed_dim, input_embed_dim, kernel_size=(1, 1), stride=1, groups=8, bias=False)
        self.norm = nn.LayerNorm(input_embed_dim)

    def forward(self, x):
        x = self.token_norm(x)  # [bs, 257, 768]
        x = x.transpose(1, 2).unsqueeze(-1)  # [bs, 768, 257, 1]
        selected = self.tokenLearner(x)  # [bs, 27, 257, 1].
        selected = selected.flatten(2)  # [bs, 27, 257].
        # the token-selection softmax over 257 positions overflows in fp16; keep it in fp32
        with torch.cuda.amp.autocast(enabled=False):
            selected = F.softmax(selected.float(), dim=-1)  # [bs, 27, 257].
        feat = self.feat(x)  # [bs, 768, 257, 1].
        feat = feat.flatten(2).transpose(1, 2)  # [bs, 257, 768]
        x = torch.einsum('...si,...id->...sd', selected.to(feat.dtype), feat)  # [bs, 27, 768]

        x = self.norm(x)
        return selected, x


class Attention(nn.Module):
    def __init__(self, dim, num_heads=8, qkv_bias=False, attn_drop=0., proj_drop=0., fused_attn=True):
        super().__init__()
        assert dim % num_heads == 0, 'dim should be divisible by num_heads'
        self.num_heads = num_heads
        head_dim = dim // num_heads
        self.scale = head_dim ** -0.5
        self.fused_attn = fused_attn and _HAS_SDPA

        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.attn_drop = nn.Dropout(attn_drop)
        self.proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Dropout(proj_drop)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)  # make torchscript happy (cannot use tensor as tuple)

        if self.fused_attn:
            # pin SDPA to the flash / mem-efficient kernels on GPU (the math fallback is ~3x slower at N=257)
            with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=True):
                x = F.scaled_dot_product_attention(q, k, v, dropout_p=self.attn_drop.p if self.training else 0.)
        else:
            attn = (q @ k.transpose(-2, -1)) * self.scale
            attn = attn.softmax(dim=-1)
            attn = self.attn_drop(attn)
            x = attn @ v

        x = x.transpose(1, 2).reshape(B, N, C)
        x = self.proj(x)
        x = self.proj_drop(x)
        return x


class Block(nn.Module):

    def __init__(self, dim, num_heads, mlp_ratio=4., qkv_bias=False, drop=0., attn_drop=0.,
                 drop_path=0., act_layer=nn.GELU, norm_layer=nn.LayerNorm, fused_attn=True):
        super().__init__()
        self.norm1 = norm_layer(dim)
        self.attn = Attention(dim, num_heads=num_heads, qkv_bias=qkv_bias, attn_drop=attn_drop, proj_drop=drop,
                              fused_attn=fused_attn)
        # NOTE: drop path for stochastic depth, we shall see if this is better than dropout here
        self.drop_path = DropPath(drop_path) if drop_path > 0. else nn.Identity()
        self.norm2 = norm_layer(dim)
        mlp_hidden_dim = int(dim * mlp_ratio)
        self.mlp = Mlp(in_features=dim, hidden_features=mlp_hidden_dim, act_layer=act_layer, drop=drop)

    def forward(self, x):
        x = x + self.drop_path(self.attn(self.norm1(x)))
        x = x + self.drop_path(self.mlp(self.norm2(x)))
        return x


class MGPSTR(VisionTransformer):

    def __init__(self, batch_max_length, use_checkpoint=False, fused_attn=True, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.batch_max_length = batch_max_length
        self.use_checkpoint = use_checkpoint
        dpr = [x.item() for x in torch.linspace(0, kwargs.get('drop_path_rate', 0.), kwargs['depth'])]
        self.blocks = nn.Sequential(*[
            Block(dim=self.embed_dim, num_heads=kwargs['num_heads'], mlp_ratio=kwargs.get('mlp_ratio', 4.),
                  qkv_bias=kwargs.get('qkv_bias', True), drop_path=dpr[i],
                  norm_layer=partial(nn.LayerNorm, eps=1e-6), fused_attn=fused_attn)
            for i in range(kwargs['depth'])])

        self.char_tokenLearner = TokenLearner(self.embed_dim, self.batch_max_length)
        self.bpe_tokenLearner = TokenLearner(self.embed_dim, self.batch_max_length)
        self.wp_tokenLearner = TokenLearner(self.embed_dim, self.batch_max_length)

    def reset_classifier(self, num_classes):
        self.num_classes = num_classes
        self.char_head = nn.Linear(self.embed_dim, num_classes) if num_classes > 0 else nn.Identity()
        self.bpe_head = nn.Linear(self.embed_dim, 50257) if num_classes > 0 else nn.Identity()
        self.wp_head = nn.Linear(self.embed_dim, 30522) if num_classes > 0 else nn.Identity()

    def forward_features(self, x):
        B = x.shape[0]
        x = self.patch_embed(x)

        cls_tokens = self.cls_token.expand(B, -1, -1)  # stole cls_tokens impl from Phil Wang, thanks
        x = torch.cat((cls_tokens, x), dim=1)
        x = x + self.pos_embed
        x = self.pos_drop(x)

        for blk in self.blocks:
            if self.use_checkpoint and self.training:
                x = checkpoint.checkpoint(blk, x)
            else:
                x = blk(x)

        attens = []
        # char
        char_attn, x_char = self.char_tokenLearner(x)
        x_char = self.char_head(x_char)
        char_out = x_char
        attens = [char_attn]

        # bpe
        bpe_attn, x_bpe = self.bpe_tokenLearner(x)
        bpe_out = self.bpe_head(x_bpe)
        attens += [bpe_attn]

        # wp
        wp_attn, x_wp = self.wp_tokenLearner(x)
        wp_out = self.wp_head(x_wp)
        attens += [wp_attn]

        return attens, [char_out, bpe_out, wp_out]

    def forward(self, x, is_eval=False):
        attn_scores, x = self.forward_features(x)
        if is_eval:
            return [attn_scores, x]
        else:
            return x


def load_pretrained_deit(model, url, num_classes=1000, in_chans=1, filter_fn=None, strict=True):
    """Load an ImageNet DeiT checkpoint into a text-shaped ViT (1-channel input, 4x4 patches)."""
    state_dict = torch.hub.load_state_dict_from_url(url=url, map_location="cpu", check_hash=True)
    if 'model' in state_dict:
        state_dict = state_dict['model']

    if filter_fn is not None:
        state_dict = filter_fn(state_dict)

    if in_chans == 1:
        conv1_name = 'patch_embed.proj'
        _logger.info('Converting first conv (%s) from 3 to 1 channel' % conv1_name)
        key = conv1_name + '.weight'
        if key in state_dict.keys():
            _logger.info('(%s) key found in state_dict' % key)
            conv1_weight = state_dict[conv1_name + '.weight']
        else:
            _logger.info('(%s) key NOT found in state_dict' % key)
            return
        # Some weights are in torch.half, ensure it's float for sum on CPU
        conv1_type = conv1_weight.dtype
        conv1_weight = conv1_weight.float()
        O, I, J, K = conv1_weight.shape
        if I > 3:
            assert conv1_weight.shape[1] % 3 == 0
            # For models with space2depth stems
            conv1_weight = conv1_weight.reshape(O, I // 3, 3, J, K)
            conv1_weight = conv1_weight.sum(dim=2, keepdim=False)
        else:
            conv1_weight = conv1_weight.sum(dim=1, keepdim=True)
        conv1_weight = conv1_weight.to(conv1_type)
        state_dict[conv1_name + '.weight'] = conv1_weight

    classifier_name = 'head'
    if num_classes == 1000 and model.default_cfg['num_classes'] == 1001:
        # special case for imagenet trained models with extra background class in pretrained weights
        classifier_weight = state_dict[classifier_name + '.weight']
        state_dict[classifier_name + '.weight'] = classifier_weight[1:]
        classifier_bias = state_dict[classifier_name + '.bias']
        state_dict[classifier_name + '.bias'] = classifier_bias[1:]
    elif num_classes != state_dict[classifier_name + '.weight'].size(0):
        # print('Removing the last fully connected layer due to dimensions mismatch ('+str(num_classes)+ ' != '+str(state_dict[classifier_name + '.weight'].size(0))+').', flush=True)
        # completely discard fully connected for all other differences between pretrained and created model
        del state_dict[classifier_name + '.weight']
        del state_dict[classifier_name + '.bias']
        strict = False

    print("Loading pre-trained vision transformer weights from %s ..." % url)
    model.load_state_dict(state_dict, strict=strict)


def _conv_filter(state_dict, patch_size=4):
    """ convert patch embedding weight from manual patchify + linear proj to conv"""
    out_dict = {}
    for k, v in state_dict.items():
        if 'patch_embed.proj.weight' in k:
            if v.shape[-1] != patch_size:
                patch_size = v.shape[-1]
            v = v.reshape((v.shape[0], 3, patch_size, patch_size))
        elif 'pos_embed' in k:
            # the 32x128 crops give 8x32 = 256 patches (+1 cls) instead of ImageNet's 196 (+1)
            posemb = v
            posemb_tok, posemb_grid = posemb[:, :1], posemb[0, 1:]
            gs_old = int(math.sqrt(len(posemb_grid)))
            posemb_grid = posemb_grid.reshape(1, gs_old, gs_old, -1).permute(0, 3, 1, 2)
            posemb_grid = F.interpolate(posemb_grid, size=(8, 32), mode='bicubic', align_corners=False)
            posemb_grid = posemb_grid.permute(0, 2, 3, 1).reshape(1, 8 * 32, -1)
            v = torch.cat([posemb_tok, posemb_grid], dim=1)
        out_dict[k] = v
    return out_dict


def create_mgp_str(batch_max_length, num_tokens, model=None, checkpoint_path='', fused_attn=True):
    if model == 'mgp_str_tiny_patch4_3_32_128':
        model = mgp_str_tiny_patch4_3_32_128(batch_max_length=batch_max_length, num_classes=num_tokens,
                                              fused_attn=fused_attn)
    elif model == 'mgp_str_small_patch4_3_32_128':
        model = mgp_str_small_patch4_3_32_128(batch_max_length=batch_max_length, num_classes=num_tokens,
                                               fused_attn=fused_attn)
    elif model == 'mgp_str_base_patch4_3_32_128':
        model = mgp_str_base_patch4_3_32_128(batch_max_length=batch_max_length, num_classes=num_tokens,
                                              fused_attn=fused_attn)
    else:
        raise ValueError(f'unknown MGP-STR variant {model}')

    model.reset_classifier(num_classes=num_tokens)

    return model


def mgp_str_tiny_patch4_3_32_128(pretrained=False, **kwargs):
    kwargs['in_chans'] = 3
    model = MGPSTR(
        img_size=(32, 128), patch_size=4, embed_dim=192, depth=12, num_heads=3, mlp_ratio=4, qkv_bias=True, **kwargs)
    model.default_cfg = _cfg(
        url='https://dl.fbaipublicfiles.com/deit/deit_tiny_patch16_224-a1311bcf.pth'
    )
    if pretrained:
        load_pretrained_deit(
            model, model.default_cfg['url'], num_classes=model.num_classes, in_chans=kwargs.get('in_chans', 3),
            filter_fn=_conv_filter)
    return model


def mgp_str_small_patch4_3_32_128(pretrained=False, **kwargs):
    kwargs['in_chans'] = 3
    model = MGPSTR(
        img_size=(32, 128), patch_size=4, embed_dim=384, depth=12, num_heads=6, mlp_ratio=4, qkv_bias=True, **kwargs)
    model.default_cfg = _cfg()
    if pretrained:
        load_pretrained_deit(
            model, 'https://dl.fbaipublicfiles.com/deit/deit_small_patch16_224-cd65a155.pth',
            num_classes=model.num_classes, in_chans=kwargs.get('in_chans', 3), filter_fn=_conv_filter)
    return model


def mgp_str_base_patch4_3_32_128(pretrained=False, **kwargs):
    kwargs['in_chans'] = 3
    model = MGPSTR(
        img_size=(32, 128), patch_size=4, embed_dim=768, depth=12, num_heads=12, mlp_ratio=4, qkv_bias=True, **kwargs)
    model.default_cfg = _cfg()
    if pretrained:
        load_pretrained_deit(
            model, 'https://dl.fbaipublicfiles.com/deit/deit_base_patch16_224-b5f2ef4d.pth',
            num_classes=model.num_classes, in_chans=kwargs.get('in_chans', 3), filter_fn=_conv_filter)
    return model
