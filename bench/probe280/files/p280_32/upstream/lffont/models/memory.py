"""
LF-Font
Copyright (c) 2020-present NAVER Corp.
MIT license

Component-wise memory of the LF-Font generator.

`DynamicMemory` stores the style-specific component features written by the encoder
for the reference glyphs of the current batch; `PersistentMemory` holds a learned
bias per component that is shared by all styles. `Memory` combines both and builds
the low-rank factorized component features (style factor x component factor).
"""
from collections import defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F

from .modules import split_dim, ConvBlock


def comp_id_to_addr(ids, language):
    """ Component id to memory address converter

    Args:
        ids [B], torch.tensor: [B, 3] for kor.
        language (str)
    """
    ids = ids.clone()
    if language == 'kor':
        ids[:, 1] += 19
        ids[:, 2] += 19 + 21
    elif language == 'thai':
        ids[:, 1] += 44
        ids[:, 2] += 44 + 20
        ids[:, 3] += 44 + 20 + 14
    elif language == 'chn':
        ids = ids.long()
    else:
        raise ValueError(language)
    return ids


class DynamicMemory:
    def __init__(self):
        self.memory = {}
        self.reset()

    def write(self, style_ids, comp_addrs, sc_feats):
        """ Batch write

        Args:
            style_ids: [B]
            comp_addrs: [B, 3]
            sc_feats: [B, 3, mem_shape]
        """
        assert len(style_ids) == len(comp_addrs) == len(sc_feats), "Input sizes are different"

        for style_id, comp_addrs_per_char, sc_feats_per_char in zip(style_ids, comp_addrs, sc_feats):
            for comp_addr, sc_feat in zip(comp_addrs_per_char, sc_feats_per_char):
                self.write_point(style_id, comp_addr, sc_feat)

    def write_point(self, style_id, comp_addr, sc_feat):
        """ Write point with reduction by mean """
        style_id = int(style_id)
        comp_addr = int(comp_addr)
        self.memory.setdefault(style_id, {}) \
                   .setdefault(comp_addr, []) \
                   .append(sc_feat)

    def read_point(self, style_id, comp_addr, reduction='mean'):
        """ Point read """
        style_id = int(style_id)
        comp_addr = int(comp_addr)
        sc_feats = self.memory[style_id][comp_addr]
        return self.reduce_features(sc_feats, reduction)

    def read_char(self, style_id, comp_addrs, reduction='mean'):
        """ Character-wise read """
        char_feats = []
        for comp_addr in comp_addrs:
            comp_feat = self.read_point(style_id, comp_addr, reduction)
            char_feats.append(comp_feat)

        char_feats = torch.stack(char_feats)  # [3, mem_shape]
        return char_feats

    def read(self, style_ids, comp_addrs, reduction='mean'):
        """ Batch read

        Args:
            style_ids: [B]
            comp_addrs: [B, 3]
            reduction: reduction method if multiple features exist in sample memory address:
                       ['mean' (default), 'first', 'rand', 'none']
        """
        sc_feats = []
        for style_id, comp_addrs_per_char in zip(style_ids, comp_addrs):
            char_feat = self.read_char(style_id, comp_addrs_per_char, reduction)
            sc_feats.append(char_feat)

        return sc_feats

    def reset(self):
        self.memory = {}

    def reduce_features(self, feats, reduction='mean'):
        if len(feats) == 1:
            return feats[0]

        if reduction == 'mean':
            return torch.stack(feats).mean(dim=0)
        elif reduction == 'first':
            return feats[0]
        elif reduction == 'rand':
            return feats[torch.randint(0, len(feats), (1,)).item()]
        elif reduction == 'none':
            return feats
        else:
            raise ValueError(reduction)


class PersistentMemory(nn.Module):
    def __init__(self, n_comps, mem_shape):
        """
        Args:
            mem_shape: (C, H, W) tuple (3-elem)
        """
        super().__init__()
        self.shape = mem_shape

        self.bias = nn.Parameter(torch.randn(n_comps, *mem_shape))
        C = mem_shape[0]
        self.hypernet = nn.Sequential(
            ConvBlock(C, C),
            ConvBlock(C, C),
            ConvBlock(C, C)
        )

    def read(self, comp_addrs):
        b = self.bias[comp_addrs]  # [B, 3, mem_shape]

        return b

    def forward(self, x, comp_addrs):
        """
        Args:
            x: [B, 3, *mem_shape]
            comp_addr: [B, 3]
        """
        b = self.read(comp_addrs)  # [B, 3, *mem_shape] * 2
        B = b.size(0)
        b = b.flatten(0, 1)
        b = self.hypernet(b)
        b = split_dim(b, 0, B)

        return x + b


class Memory(nn.Module):
    # n_components: # of total comopnents. 19 + 21 + 28 = 68 in kr.
    STYLE_id = -1

    def __init__(self, mem_shape, n_comps, persistent, language):
        """
        Args:
            mem_shape (tuple [3]):
                memory shape in (C, H, W) tuple, which is same as encoded feature shape
            n_comps: # of total components, which identify address
            persistent: whether to use persistent memory
        """
        super().__init__()
        self.dynamic_memory = DynamicMemory()
        self.language = language
        self.persistent = persistent
        if self.persistent:
            self.mem_shape = mem_shape
            self.persistent_memory = PersistentMemory(n_comps, mem_shape)

    def write(self, style_ids, comp_ids, sc_feats):
        """ Write style-component features.
        Args:
            style_ids: [B]
            comp_ids: [B, 3]
            sc_feats: [B, 3, *mem_shape]
        """
        comp_addrs = comp_id_to_addr(comp_ids, self.language)
        self.dynamic_memory.write(style_ids, comp_addrs, sc_feats)

    def read_chars(self, style_ids, comp_ids, reduction='mean', type="both"):
        """ Read style-component features.
        Args:
            style_ids: [B]
            comp_ids: [B, 3]
            reduction: reduction method if multiple features exist in sample memory address:
                       ['mean' (default), 'first', 'rand', 'none']
        """
        sc_feats = []
        read_funcs = {"both": self.read_char_both,
                      "dynamic": self.read_char_dynamic,
                      "persistent": self.read_char_persistent}

        read_char = read_funcs[type]

        for style_id, comp_ids_per_char in zip(style_ids, comp_ids):
            char_feat = read_char(style_id, comp_ids_per_char, reduction)
            sc_feats.append(char_feat)

        return sc_feats

    def read_char_both(self, style_id, comp_ids_per_char, reduction='mean'):
        comp_addrs = comp_id_to_addr(comp_ids_per_char, self.language)
        saved_char_feats = self.dynamic_memory.read_char(style_id, comp_addrs, reduction)
        if self.persistent:
            addrs = torch.LongTensor(comp_addrs).cuda()
            saved_char_feats = self.persistent_memory(saved_char_feats.unsqueeze(0), addrs.unsqueeze(0))[0]

        return saved_char_feats

    def read_char_dynamic(self, style_id, comp_ids_per_char, reduction='mean'):
        comp_addrs = comp_id_to_addr(comp_ids_per_char, self.language)
        saved_char_feats = self.dynamic_memory.read_char(style_id, comp_addrs, reduction)
        return saved_char_feats

    def read_char_persistent(self, style_id, comp_ids_per_char, reduction='mean'):
        comp_addrs = comp_id_to_addr(comp_ids_per_char, self.language)
        mem_feats = self.persistent_memory.read(torch.LongTensor(comp_addrs).cuda())
        return mem_feats

    def reset_dynamic(self):
        """ Reset dynamic memory """
        self.dynamic_memory.reset()

    def get_fact_memory_var(self):
        """Variance of the stored style factors, averaged over components (for logging)."""
        per_comp = defaultdict(list)
        for style_id, comps in self.dynamic_memory.memory.items():
            for comp_addr, feats in comps.items():
                per_comp[comp_addr].append(torch.stack(feats).mean(0))
        if not per_comp:
            return 0.0
        vars_ = [torch.stack(v).var(0).mean().item() for v in per_comp.values() if len(v) > 1]
        return float(sum(vars_) / max(len(vars_), 1))

    def memory_footprint(self):
        """Rough size of the dynamic memory in MB (features live on the GPU)."""
        n = 0
        for comps in self.dynamic_memory.memory.values():
            for feats in comps.values():
                n += sum(f.numel() * f.element_size() for f in feats)
        return n / 2 ** 20


def select_by_addr(feats, addrs, n_comps):
    """Gather per-component features with a one-hot matmul (avoids index_select on large banks).

    feats: (n_comps, C, H, W), addrs: (B, k) -> (B, k, C, H, W)
    """
    onehot = F.one_hot(addrs, num_classes=n_comps).to(feats.dtype)  # (B, k, n_comps)
    flat = feats.flatten(1)  # (n_comps, CHW)
    out = onehot @ flat
    return out.view(*addrs.shape, *feats.shape[1:])
