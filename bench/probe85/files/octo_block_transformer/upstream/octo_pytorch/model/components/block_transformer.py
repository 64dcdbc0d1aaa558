"""PyTorch port of Octo's BlockTransformer.

Tokens arrive in named groups (task prefix groups, per-timestep observation groups, readout groups). Which group may
attend to which is declared with AttentionRule, and the dense boolean mask is generated once per shape and cached.
"""

import logging
from dataclasses import dataclass
from enum import Enum
from typing import Dict, List, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

try:  # optional: only used for the unmasked fast path on Ampere+ GPUs
    from flash_attn import flash_attn_func
except ImportError:
    flash_attn_func = None

logger = logging.getLogger(__name__)

# Prefer the fused kernels; the math backend is kept as the last resort for odd head dims.
_SDPA_BACKENDS = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]

# bf16 matmuls only pay off on sm80+; older cards stay in fp32
COMPUTE_DTYPE = (
    torch.bfloat16 if torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8 else torch.float32
)


class AttentionRule(Enum):
    """Enum describing when to attend to another token group."""

    NEVER = "never"
    CAUSAL = "other.timestep <= self.timestep"
    CURRENT = "other.timestep == self.timestep"
    STRICT_PAST = "other.timestep < self.timestep"
    ALL = "all"


@dataclass
class TokenGroup:
    name: str
    tokens: torch.Tensor  # (batch, n_tokens, dim)
    mask: torch.Tensor  # (batch, n_tokens)
    attention_rules: Dict[str, AttentionRule]


@dataclass
class PrefixGroup(TokenGroup):
    pass


@dataclass
class TimestepGroup(TokenGroup):
    # tokens: (batch, horizon, n_tokens, dim); mask: (batch, horizon, n_tokens)
    pass


def find_match(pattern_dict: Dict[str, AttentionRule], name: str, default: AttentionRule) -> AttentionRule:
    """Find the first matching pattern (prefix match) in the dictionary, or return the default value."""
    for pattern, value in pattern_dict.items():
        if name.startswith(pattern):
            return value
    return default


class MlpBlock(nn.Module):
    def __init__(self, dim: int, mlp_dim: int, dropout_rate: float = 0.1):
        super().__init__()
        self.fc1 = nn.Linear(dim, mlp_dim)
        self.fc2 = nn.Linear(mlp_dim, dim)
        self.drop = nn.Dropout(dropout_rate)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.fc1(x)
        x = F.gelu(x)
        x = self.drop(x)
        x = self.fc2(x)
        return self.drop(x)


class MultiHeadAttention(nn.Module):
    def __init__(self, dim: int, num_heads: int, attention_dropout_rate: float = 0.0):
        super().__init__()
        assert dim % num_heads == 0
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.attention_dropout_rate = attention_dropout_rate

    def forward(self, x: torch.Tensor, attention_mask: Optional[torch.Tensor]) -> torch.Tensor:
        b, n, d = x.shape
        qkv = self.qkv(x).view(b, n, 3, self.num_heads, self.head_dim)
        q, k, v = qkv.unbind(dim=2)  # (b, n, h, hd)
        dropout_p = self.attention_dropout_rate if self.training else 0.0

        if flash_attn_func is not None and x.is_cuda and attention_mask is None:
            out = flash_attn_func(q, k, v, dropout_p=dropout_p)
            return self.proj(out.reshape(b, n, d))

        q, k, v = (t.transpose(1, 2) for t in (q, k, v))  # (b, h, n, hd)
        with sdpa_kernel(_SDPA_BACKENDS):
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=attention_mask, dropout_p=dropout_p)
        out = out.transpose(1, 2).reshape(b, n, d)
        return self.proj(out)


class Encoder1DBlock(nn.Module):
    def __init__(self, dim: int, mlp_dim: int, num_heads: int, dropout_rate: float = 0.1, attention_dropout_rate: float = 0.1):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = MultiHeadAttention(dim, num_heads, attention_dropout_rate)
        self.drop = nn.Dropout(dropout_rate)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = MlpBlock(dim, mlp_dim, dropout_rate)

    def forward(self, x: torch.Tensor, attention_mask: Optional[torch.Tensor]) -> torch.Tensor:
        x = x + self.drop(self.attn(self.norm1(x), attention_mask))
        return x + self.mlp(self.norm2(x))


class Transformer(nn.Module):
    def __init__(self, dim: int, num_layers: int, mlp_dim: int, num_attention_heads: int, dropout_rate: float = 0.1, attention_dropout_rate: float = 0.1):
        super().__init__()
        self.blocks = nn.ModuleList(
            [Encoder1DBlock(dim, mlp_dim, num_attention_heads, dropout_rate, attention_dropout_rate) for _ in range(num_layers)]
        )
        self.norm = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor, attention_mask: Optional[torch.Tensor]) -> torch.Tensor:
        for block in self.blocks:
            x = block(x, attention_mask)
        return self.norm(x)


class BlockTransformer(nn.Module):
    """A transformer that acts on multiple groups of tokens, which may attend to each other (in complex patterns)."""

    def __init__(self, dim: int, num_layers: int, mlp_dim: int, num_attention_heads: int, dropout_rate: float = 0.0, attention_dropout_rate: float = 0.0, enforce_causal: bool = True):
        super().__init__()
        self.transformer = Transformer(dim, num_layers, mlp_dim, num_attention_heads, dropout_rate, attention_dropout_rate)
        self.enforce_causal = enforce_causal
        self._mask_cache: Dict[Tuple, torch.Tensor] = {}

    def forward(self, prefix_groups: List[PrefixGroup], timestep_groups: List[TimestepGroup]):
        horizon = timestep_groups[0].tokens.shape[1]
        assert all(group.tokens.shape[-1] == prefix_groups[0].tokens.shape[-1] for group in prefix_groups + timestep_groups)

        input_tokens = self.assemble_input_tokens(prefix_groups, timestep_groups)
        attention_mask = self.generate_attention_mask(prefix_groups, timestep_groups)

        with torch.autocast(device_type=input_tokens.device.type, dtype=COMPUTE_DTYPE, enabled=COMPUTE_DTYPE != torch.float32):
            output = self.transformer(input_tokens, attention_mask)

        all_prefix_outputs, all_timestep_outputs = self.split_output_tokens(output.float(), prefix_groups, timestep_groups)
        return all_prefix_outputs, all_timestep_outputs

    def assemble_input_tokens(self, prefix_groups: List[PrefixGroup], timestep_groups: List[TimestepGroup]) -> torch.Tensor:
        if len(prefix_groups) > 0:
            all_prefix_tokens = torch.cat([group.tokens for group in prefix_groups], dim=1)
        else:
            b = timestep_groups[0].tokens.shape[0]
            all_prefix_tokens = timestep_groups[0].tokens.new_zeros((b, 0, timestep_groups[0].tokens.shape[-1]))

        all_timestep_tokens = torch.cat([group.tokens for group in timestep_groups], dim=2)
        b, t, n, d = all_timestep_tokens.shape
        all_timestep_tokens = all_timestep_tokens.reshape(b, t * n, d)
        return torch.cat([all_prefix_tokens, all_timestep_tokens], dim=1)

    def split_output_tokens(self, output_tokens: torch.Tensor, prefix_groups: List[PrefixGroup], timestep_groups: List[TimestepGroup]):
        horizon = timestep_groups[0].tokens.shape[1]
        tokens_per_prefix_group = [group.tokens.shape[1] for group in prefix_groups]
        n_prefix_tokens = sum(tokens_per_prefix_group)

        prefix_embeddings, timestep_embeddings = output_tokens[:, :n_prefix_tokens], output_tokens[:, n_prefix_tokens:]

        all_prefix_outputs = []
        start = 0
        for group, n in zip(prefix_groups, tokens_per_prefix_group):
            all_prefix_outputs.append(PrefixGroup(group.name, prefix_embeddings[:, start : start + n], group.mask, group.attention_rules))
            start += n

        b = timestep_embeddings.shape[0]
        timestep_embeddings = timestep_embeddings.reshape(b, horizon, -1, timestep_embeddings.shape[-1])
        all_timestep_outputs = []
        start = 0
        for group in timestep_groups:
            n = group.tokens.shape[2]
            all_timestep_outputs.append(TimestepGroup(group.name, timestep_embeddings[:, :, start : start + n], group.mask, group.attention_rules))
            start += n
        return all_prefix_outputs, all_timestep_outputs

    def generate_attention_mask(self, prefix_groups: List[PrefixGroup], timestep_groups: List[TimestepGroup]) -> torch.Tensor:
        """Boolean (batch, 1, n, n) mask; True where attention is allowed."""
        if self.enforce_causal:
            self.verify_causality(prefix_groups, timestep_groups)

        device = timestep_groups[0].tokens.device
        horizon = timestep_groups[0].tokens.shape[1]
        key = (
            tuple((g.name, g.tokens.shape[1]) for g in prefix_groups),
            tuple((g.name, g.tokens.shape[2]) for g in timestep_groups),
            horizon,
            str(device),
        )
        if key not in self._mask_cache:
            self._mask_cache[key] = self._rule_mask(prefix_groups, timestep_groups, horizon, device)
        rule_mask = self._mask_cache[key]

        pad_mask = self.generate_pad_attention_mask(prefix_groups, timestep_groups)
        return (rule_mask[None, None] & pad_mask).contiguous()

    def _rule_mask(self, prefix_groups, timestep_groups, horizon, device) -> torch.Tensor:
        def _get_position(i, tokens_per_elem):
            return torch.searchsorted(torch.cumsum(torch.tensor(tokens_per_elem), 0), torch.tensor(i), right=True).item()

        tokens_per_prefix_group = [g.tokens.shape[1] for g in prefix_groups]
        tokens_per_timestep_group = [g.tokens.shape[2] for g in timestep_groups]
        tokens_for_prefix = sum(tokens_per_prefix_group)
        tokens_per_time_step = sum(tokens_per_timestep_group)
        total_tokens = tokens_for_prefix + tokens_per_time_step * horizon

        def _get_token_metadata(i):
            if i < tokens_for_prefix:
                position = _get_position(i, tokens_per_prefix_group)
                return -1, prefix_groups[position].name, prefix_groups[position].attention_rules
            i -= tokens_for_prefix
            timestep, i = divmod(i, tokens_per_time_step)
            position = _get_position(i, tokens_per_timestep_group)
            return timestep, timestep_groups[position].name, timestep_groups[position].attention_rules

        meta = [_get_token_metadata(i) for i in range(total_tokens)]
        mask = torch.zeros((total_tokens, total_tokens), dtype=torch.bool)
        for i, (t_i, _, rules_i) in enumerate(meta):
            for j, (t_j, name_j, _) in enumerate(meta):
                rule = find_match(rules_i, name_j, AttentionRule.NEVER)
                if rule == AttentionRule.ALL:
                    allowed = True
                elif rule == AttentionRule.CAUSAL:
                    allowed = t_j <= t_i
                elif rule == AttentionRule.CURRENT:
                    allowed = t_j == t_i
                elif rule == AttentionRule.STRICT_PAST:
                    allowed = t_j < t_i
                else:
                    allowed = False
                mask[i, j] = allowed
        return mask.to(device)

    def generate_pad_attention_mask(self, prefix_groups, timestep_groups) -> torch.Tensor:
        b, horizon = timestep_groups[0].tokens.shape[:2]
        if len(prefix_groups) > 0:
            prefix_pad_mask = torch.cat([g.mask for g in prefix_groups], dim=1)
        else:
            prefix_pad_mask = timestep_groups[0].mask.new_zeros((b, 0))
        timestep_pad_mask = torch.cat([g.mask for g in timestep_groups], dim=2).reshape(b, -1)
        pad_mask = torch.cat([prefix_pad_mask, timestep_pad_mask], dim=1).bool()
        return pad_mask[:, None, None, :].expand(b, 1, pad_mask.shape[1], pad_mask.shape[1])

    def verify_causality(self, prefix_groups, timestep_groups):
        for prefix_group in prefix_groups:
            for ts_group in timestep_groups:
                rule = find_match(prefix_group.attention_rules, ts_group.name, AttentionRule.NEVER)
                assert rule == AttentionRule.NEVER, f"Causality broken! Prefix group {prefix_group.name} attends to {ts_group.name}"
        for ts_group in timestep_groups:
            for other in timestep_groups:
                rule = find_match(ts_group.attention_rules, other.name, AttentionRule.NEVER)
                assert rule != AttentionRule.ALL, "Causality broken! Timestep groups may not attend with AttentionRule.ALL"
