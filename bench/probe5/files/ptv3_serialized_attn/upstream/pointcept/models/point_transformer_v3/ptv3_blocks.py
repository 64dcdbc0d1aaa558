"""
Point Transformer V3 building blocks (excerpt): serialized patch attention over
space-filling-curve orderings, sparse-conv positional encoding, and grid pooling.

Points of a batch are packed (N, C) with `offset` marking where each cloud ends; attention
runs inside fixed-size patches of the serialized order, as variable-length sequences.
"""
import math
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F
import spconv.pytorch as spconv
import torch_scatter
from timm.models.layers import DropPath

try:
    import flash_attn
except ImportError:
    flash_attn = None


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


def z_order_encode(grid_coord: torch.Tensor, depth: int = 16):
    """Morton code of integer (x, y, z) coordinates by bit interleaving."""
    x, y, z = grid_coord[:, 0].long(), grid_coord[:, 1].long(), grid_coord[:, 2].long()
    code = torch.zeros_like(x)
    for i in range(depth):
        code |= ((x >> i) & 1) << (3 * i + 2)
        code |= ((y >> i) & 1) << (3 * i + 1)
        code |= ((z >> i) & 1) << (3 * i)
    return code


class Point(dict):
    """Packed point cloud: coord, grid_coord, feat, offset (+ serialization and sparse-conv state)."""

    def __getattr__(self, k):
        return self[k]

    def __setattr__(self, k, v):
        self[k] = v

    def serialization(self, depth=16):
        if "batch" not in self:
            self["batch"] = offset2batch(self.offset)
        code = z_order_encode(self.grid_coord, depth)
        code = self.batch << (depth * 3) | code
        order = torch.argsort(code)
        inverse = torch.zeros_like(order).scatter_(0, order, torch.arange(0, code.shape[0], device=order.device))
        self["serialized_code"] = code
        self["serialized_order"] = order
        self["serialized_inverse"] = inverse
        self["serialized_depth"] = depth

    def sparsify(self, pad=96):
        if "batch" not in self:
            self["batch"] = offset2batch(self.offset)
        sparse_shape = torch.add(torch.max(self.grid_coord, dim=0).values, pad).tolist()
        self["sparse_shape"] = sparse_shape
        self["sparse_conv_feat"] = spconv.SparseConvTensor(
            features=self.feat,
            indices=torch.cat([self.batch.unsqueeze(-1).int(), self.grid_coord.int()], dim=1).contiguous(),
            spatial_shape=sparse_shape,
            batch_size=self.batch[-1].tolist() + 1,
        )


class SerializedAttention(nn.Module):
    def __init__(self, channels, num_heads, patch_size, qkv_bias=True, qk_scale=None, attn_drop=0.0,
                 proj_drop=0.0, order_index=0, enable_flash=True, upcast_attention=False, upcast_softmax=False):
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
        """Pad every cloud to a multiple of patch_size; cu_seqlens delimit the patches."""
        pad_key, unpad_key, cu_seqlens_key = "pad", "unpad", "cu_seqlens_key"
        if pad_key not in point or unpad_key not in point or cu_seqlens_key not in point:
            offset = point.offset
            bincount = offset2bincount(offset)
            bincount_pad = (torch.div(bincount + self.patch_size - 1, self.patch_size, rounding_mode="trunc")
                            * self.patch_size)
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
                        pad[_offset_pad[i + 1] - 2 * self.patch_size + (bincount[i] % self.patch_size):
                            _offset_pad[i + 1] - self.patch_size]
                pad[_offset_pad[i]: _offset_pad[i + 1]] -= _offset_pad[i] - _offset[i]
                cu_seqlens.append(torch.arange(_offset_pad[i], _offset_pad[i + 1], step=self.patch_size,
                                               dtype=torch.int32, device=offset.device))
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
        order = point.serialized_order[pad]
        inverse = unpad[point.serialized_inverse]

        qkv = self.qkv(point.feat)[order]

        if not self.enable_flash:
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


class ConditionalPositionEncoding(nn.Module):
    """Submanifold sparse conv over the voxel grid, added to the features (xCPE)."""

    def __init__(self, channels, indice_key):
        super().__init__()
        self.conv = spconv.SubMConv3d(channels, channels, kernel_size=3, bias=True, indice_key=indice_key)
        self.linear = nn.Linear(channels, channels)
        self.norm = nn.LayerNorm(channels)

    def forward(self, point):
        sp = point.sparse_conv_feat.replace_feature(point.feat)
        sp = self.conv(sp)
        point.feat = point.feat + self.norm(self.linear(sp.features))
        point.sparse_conv_feat = sp
        return point


class SerializedPooling(nn.Module):
    """Merge points that share a cell two levels up the serialization tree; max-pool their features."""

    def __init__(self, in_channels, out_channels, stride=2):
        super().__init__()
        assert stride in (2, 4, 8)
        self.pooling_depth = (math.ceil(stride) - 1).bit_length()
        self.proj = nn.Linear(in_channels, out_channels)
        self.norm = nn.LayerNorm(out_channels)
        self.act = nn.GELU()

    def forward(self, point):
        code = point.serialized_code >> (self.pooling_depth * 3)
        code_, cluster, counts = torch.unique(code, sorted=True, return_inverse=True, return_counts=True)
        _, indices = torch.sort(cluster)
        idx_ptr = torch.cat([counts.new_zeros(1), torch.cumsum(counts, dim=0)])
        head_indices = indices[idx_ptr[:-1]]
        feat = torch_scatter.segment_csr(self.proj(point.feat)[indices], idx_ptr, reduce="max")
        pooled = Point(
            feat=self.act(self.norm(feat)),
            coord=torch_scatter.segment_csr(point.coord[indices], idx_ptr, reduce="mean"),
            grid_coord=point.grid_coord[head_indices] >> self.pooling_depth,
            batch=point.batch[head_indices],
        )
        pooled["offset"] = batch2offset(pooled.batch)
        pooled.serialization(depth=point.serialized_depth - self.pooling_depth)
        pooled.sparsify()
        return pooled


class Block(nn.Module):
    def __init__(self, channels, num_heads, patch_size=1024, mlp_ratio=4.0, drop_path=0.0, order_index=0,
                 cpe_indice_key=None, enable_flash=True):
        super().__init__()
        self.cpe = ConditionalPositionEncoding(channels, cpe_indice_key)
        self.norm1 = nn.LayerNorm(channels)
        self.attn = SerializedAttention(channels, num_heads, patch_size, order_index=order_index,
                                        enable_flash=enable_flash)
        self.norm2 = nn.LayerNorm(channels)
        self.mlp = nn.Sequential(OrderedDict([
            ("fc1", nn.Linear(channels, int(channels * mlp_ratio))), ("act", nn.GELU()),
            ("fc2", nn.Linear(int(channels * mlp_ratio), channels))]))
        self.drop_path = DropPath(drop_path) if drop_path > 0 else nn.Identity()

    def forward(self, point):
        point = self.cpe(point)
        shortcut = point.feat
        point.feat = self.norm1(point.feat)
        point = self.attn(point)
        point.feat = shortcut + self.drop_path(point.feat)
        point.feat = point.feat + self.drop_path(self.mlp(self.norm2(point.feat)))
        return point
