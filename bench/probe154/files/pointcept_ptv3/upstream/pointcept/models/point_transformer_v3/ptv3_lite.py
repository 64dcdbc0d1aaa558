"""
Point Transformer V3 (trimmed): serialized attention over z-order / hilbert
patches, sparse-conv positional encoding and segment-based pooling.

Requires: spconv-cu12x, torch_scatter, (optional) flash-attn >= 2.
"""
from functools import partial

import torch
import torch.nn as nn
import torch.nn.functional as F
import spconv.pytorch as spconv
import torch_scatter
from addict import Dict
from timm.models.layers import DropPath

try:
    import flash_attn
except ImportError:
    flash_attn = None

from pointcept.models.builder import MODELS
from pointcept.models.utils.serialization import encode


@torch.inference_mode()
def offset2bincount(offset):
    return torch.diff(offset, prepend=torch.tensor([0], device=offset.device, dtype=torch.long))


@torch.inference_mode()
def offset2batch(offset):
    bincount = offset2bincount(offset)
    return torch.arange(len(bincount), device=offset.device, dtype=torch.long).repeat_interleave(bincount)


@torch.inference_mode()
def batch2offset(batch):
    return torch.cumsum(batch.bincount(), dim=0).long()


class Point(Dict):
    """Pointcept point structure: coord, grid_coord, feat, offset/batch, serialization."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if "batch" not in self.keys() and "offset" in self.keys():
            self["batch"] = offset2batch(self.offset)
        elif "offset" not in self.keys() and "batch" in self.keys():
            self["offset"] = batch2offset(self.batch)

    def serialization(self, order="z", depth=None, shuffle_orders=False):
        assert "batch" in self.keys()
        if "grid_coord" not in self.keys():
            assert {"grid_size", "coord"}.issubset(self.keys())
            self["grid_coord"] = torch.div(
                self.coord - self.coord.min(0)[0], self.grid_size, rounding_mode="trunc"
            ).int()
        if depth is None:
            depth = int(self.grid_coord.max()).bit_length()
        self["serialized_depth"] = depth
        assert depth * 3 + len(self.offset).bit_length() <= 63
        code = [encode(self.grid_coord, self.batch, depth, order=order_) for order_ in order]
        code = torch.stack(code)
        order = torch.argsort(code)
        inverse = torch.zeros_like(order).scatter_(
            dim=1, index=order,
            src=torch.arange(0, code.shape[1], device=order.device).repeat(code.shape[0], 1),
        )
        if shuffle_orders:
            perm = torch.randperm(code.shape[0])
            code, order, inverse = code[perm], order[perm], inverse[perm]
        self["serialized_code"] = code
        self["serialized_order"] = order
        self["serialized_inverse"] = inverse

    def sparsify(self, pad=96):
        assert {"feat", "batch"}.issubset(self.keys())
        sparse_shape = torch.add(torch.max(self.grid_coord, dim=0).values, pad).tolist()
        sparse_conv_feat = spconv.SparseConvTensor(
            features=self.feat,
            indices=torch.cat([self.batch.unsqueeze(-1).int(), self.grid_coord.int()], dim=1).contiguous(),
            spatial_shape=sparse_shape,
            batch_size=self.batch[-1].tolist() + 1,
        )
        self["sparse_shape"] = sparse_shape
        self["sparse_conv_feat"] = sparse_conv_feat


class SerializedAttention(nn.Module):
    def __init__(self, channels, num_heads, patch_size, qkv_bias=True, qk_scale=None,
                 attn_drop=0.0, proj_drop=0.0, order_index=0, enable_flash=True, upcast_attention=True,
                 upcast_softmax=True):
        super().__init__()
        assert channels % num_heads == 0
        self.channels = channels
        self.num_heads = num_heads
        self.scale = qk_scale or (channels // num_heads) ** -0.5
        self.order_index = order_index
        self.upcast_attention = upcast_attention
        self.upcast_softmax = upcast_softmax
        self.enable_flash = enable_flash
        if enable_flash:
            assert upcast_attention is False, "Set upcast_attention to False when enable Flash Attention"
            assert upcast_softmax is False, "Set upcast_softmax to False when enable Flash Attention"
            assert flash_attn is not None, "Make sure flash_attn is installed."
            self.patch_size = patch_size
            self.attn_drop = attn_drop
        else:
            self.patch_size_max = patch_size
            self.patch_size = 0
            self.attn_drop = nn.Dropout(attn_drop)

        self.qkv = nn.Linear(channels, channels * 3, bias=qkv_bias)
        self.proj = nn.Linear(channels, channels)
        self.proj_drop = nn.Dropout(proj_drop)
        self.softmax = nn.Softmax(dim=-1)

    @torch.no_grad()
    def get_padding_and_inverse(self, point):
        pad_key, unpad_key, cu_seqlens_key = "pad", "unpad", "cu_seqlens_key"
        if pad_key not in point.keys() or unpad_key not in point.keys():
            offset = point.offset
            bincount = offset2bincount(offset)
            bincount_pad = (
                torch.div(bincount + self.patch_size - 1, self.patch_size, rounding_mode="trunc") * self.patch_size
            )
            mask_pad = bincount > self.patch_size
            bincount_pad = ~mask_pad * bincount + mask_pad * bincount_pad
            _offset = nn.functional.pad(offset, (1, 0))
            _offset_pad = nn.functional.pad(torch.cumsum(bincount_pad, dim=0), (1, 0))
            pad = torch.arange(_offset_pad[-1], device=offset.device)
            unpad = torch.arange(_offset[-1], device=offset.device)
            cu_seqlens = []
            for i in range(len(offset)):
                unpad[_offset[i]: _offset[i + 1]] += _offset_pad[i] - _offset[i]
                if bincount[i] != bincount_pad[i]:
                    pad[_offset_pad[i + 1] - self.patch_size + (bincount[i] % self.patch_size): _offset_pad[i + 1]] = \
                        pad[_offset_pad[i + 1] - 2 * self.patch_size + (bincount[i] % self.patch_size): _offset_pad[i + 1] - self.patch_size]
                pad[_offset_pad[i]: _offset_pad[i + 1]] -= _offset_pad[i] - _offset[i]
                cu_seqlens.append(
                    torch.arange(_offset_pad[i], _offset_pad[i + 1], step=self.patch_size, dtype=torch.int32, device=offset.device)
                )
            point[pad_key] = pad
            point[unpad_key] = unpad
            point[cu_seqlens_key] = nn.functional.pad(torch.concat(cu_seqlens), (0, 1), value=_offset_pad[-1])
        return point[pad_key], point[unpad_key], point[cu_seqlens_key]

    def forward(self, point):
        if not self.enable_flash:
            self.patch_size = min(offset2bincount(point.offset).min().tolist(), self.patch_size_max)

        H = self.num_heads
        K = self.patch_size
        C = self.channels

        pad, unpad, cu_seqlens = self.get_padding_and_inverse(point)

        order = point.serialized_order[self.order_index][pad]
        inverse = unpad[point.serialized_inverse[self.order_index]]

        # padding and reshape feat and batch for serialized point patch
        qkv = self.qkv(point.feat)[order]

        if not self.enable_flash:
            # encode and reshape qkv: (N', K, 3, H, C') => (3, N', H, K, C')
            q, k, v = qkv.reshape(-1, K, 3, H, C // H).permute(2, 0, 3, 1, 4).unbind(dim=0)
            if self.upcast_attention:
                q = q.float()
                k = k.float()
            attn = (q * self.scale) @ k.transpose(-2, -1)  # (N', H, K, K)
            if self.upcast_softmax:
                attn = attn.float()
            attn = self.softmax(attn)
            attn = self.attn_drop(attn).to(qkv.dtype)
            feat = (attn @ v).transpose(1, 2).reshape(-1, C)
        else:
            feat = flash_attn.flash_attn_varlen_qkvpacked_func(
                qkv.half().reshape(-1, 3, H, C // H),
                cu_seqlens,
                max_seqlen=self.patch_size,
                dropout_p=self.attn_drop if self.training else 0,
                softmax_scale=self.scale,
            ).reshape(-1, C)
            feat = feat.to(qkv.dtype)
        feat = feat[inverse]

        feat = self.proj(feat)
        feat = self.proj_drop(feat)
        point.feat = feat
        return point


class Block(nn.Module):
    def __init__(self, channels, num_heads, patch_size=48, mlp_ratio=4.0, drop_path=0.0,
                 norm_layer=nn.LayerNorm, act_layer=nn.GELU, pre_norm=True, order_index=0,
                 cpe_indice_key=None, enable_flash=True, upcast_attention=True, upcast_softmax=True):
        super().__init__()
        self.pre_norm = pre_norm
        self.cpe = spconv.SparseSequential(
            spconv.SubMConv3d(channels, channels, kernel_size=3, bias=True, indice_key=cpe_indice_key),
            nn.Linear(channels, channels),
            norm_layer(channels),
        )
        self.norm1 = norm_layer(channels)
        self.attn = SerializedAttention(
            channels=channels, patch_size=patch_size, num_heads=num_heads, order_index=order_index,
            enable_flash=enable_flash, upcast_attention=upcast_attention, upcast_softmax=upcast_softmax,
        )
        self.norm2 = norm_layer(channels)
        hidden = int(channels * mlp_ratio)
        self.mlp = nn.Sequential(nn.Linear(channels, hidden), act_layer(), nn.Linear(hidden, channels))
        self.drop_path = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()

    def forward(self, point: Point):
        shortcut = point.feat
        point.sparse_conv_feat = self.cpe(point.sparse_conv_feat)
        point.feat = shortcut + point.sparse_conv_feat.features
        shortcut = point.feat
        if self.pre_norm:
            point.feat = self.norm1(point.feat)
        point = self.attn(point)
        point.feat = shortcut + self.drop_path(point.feat)
        if not self.pre_norm:
            point.feat = self.norm1(point.feat)

        shortcut = point.feat
        if self.pre_norm:
            point.feat = self.norm2(point.feat)
        point.feat = shortcut + self.drop_path(self.mlp(point.feat))
        if not self.pre_norm:
            point.feat = self.norm2(point.feat)
        point.sparse_conv_feat = point.sparse_conv_feat.replace_feature(point.feat)
        return point


class SerializedPooling(nn.Module):
    def __init__(self, in_channels, out_channels, stride=2, reduce="max", shuffle_orders=True):
        super().__init__()
        assert stride == 2 ** (int(stride).bit_length() - 1)
        assert reduce in ["sum", "mean", "min", "max"]
        self.stride = stride
        self.reduce = reduce
        self.shuffle_orders = shuffle_orders
        self.proj = nn.Linear(in_channels, out_channels)
        self.norm = nn.BatchNorm1d(out_channels)
        self.act = nn.GELU()

    def forward(self, point: Point):
        pooling_depth = (int(self.stride) - 1).bit_length()
        code = point.serialized_code >> pooling_depth * 3
        code_, cluster, counts = torch.unique(code[0], sorted=True, return_inverse=True, return_counts=True)
        _, indices = torch.sort(cluster)
        idx_ptr = torch.cat([counts.new_zeros(1), torch.cumsum(counts, dim=0)])
        head_indices = indices[idx_ptr[:-1]]
        code = code[:, head_indices]
        order = torch.argsort(code)
        inverse = torch.zeros_like(order).scatter_(
            dim=1, index=order,
            src=torch.arange(0, code.shape[1], device=order.device).repeat(code.shape[0], 1),
        )
        point_dict = Dict(
            feat=torch_scatter.segment_csr(self.proj(point.feat)[indices], idx_ptr, reduce=self.reduce),
            coord=torch_scatter.segment_csr(point.coord[indices], idx_ptr, reduce="mean"),
            grid_coord=point.grid_coord[head_indices] >> pooling_depth,
            serialized_code=code,
            serialized_order=order,
            serialized_inverse=inverse,
            serialized_depth=point.serialized_depth - pooling_depth,
            batch=point.batch[head_indices],
        )
        point = Point(point_dict)
        point.feat = self.act(self.norm(point.feat))
        point.sparsify()
        return point


@MODELS.register_module("PT-v3-lite")
class PointTransformerV3Lite(nn.Module):
    def __init__(self, in_channels=6, order=("z", "z-trans", "hilbert", "hilbert-trans"),
                 stride=(2, 2, 2), enc_depths=(2, 2, 6, 2), enc_channels=(32, 64, 128, 256),
                 enc_num_head=(2, 4, 8, 16), enc_patch_size=(1024, 1024, 1024, 1024),
                 drop_path=0.3, enable_flash=True, upcast_attention=False, upcast_softmax=False):
        super().__init__()
        self.order = [order] if isinstance(order, str) else order
        self.embedding = spconv.SparseSequential(
            spconv.SubMConv3d(in_channels, enc_channels[0], kernel_size=5, padding=1, bias=False, indice_key="stem"),
            nn.BatchNorm1d(enc_channels[0]),
            nn.GELU(),
        )
        dpr = [x.item() for x in torch.linspace(0, drop_path, sum(enc_depths))]
        self.enc = nn.ModuleList()
        for s in range(len(enc_depths)):
            stage = nn.ModuleList()
            if s > 0:
                stage.append(SerializedPooling(enc_channels[s - 1], enc_channels[s], stride=stride[s - 1]))
            for i in range(enc_depths[s]):
                stage.append(Block(
                    channels=enc_channels[s], num_heads=enc_num_head[s], patch_size=enc_patch_size[s],
                    drop_path=dpr[sum(enc_depths[:s]) + i], order_index=i % len(self.order),
                    cpe_indice_key=f"stage{s}", enable_flash=enable_flash,
                    upcast_attention=upcast_attention, upcast_softmax=upcast_softmax,
                ))
            self.enc.append(stage)

    def forward(self, data_dict):
        point = Point(data_dict)
        point.serialization(order=self.order, shuffle_orders=self.training)
        point.sparsify()
        point.sparse_conv_feat = self.embedding(point.sparse_conv_feat)
        point.feat = point.sparse_conv_feat.features
        for stage in self.enc:
            for m in stage:
                point = m(point)
        return point
