"""Wayformer: Motion Forecasting via Simple & Efficient Attention Networks (Nayakanti et al., 2022).

Re-implementation of the early-fusion / latent-query variant used in our Waymo Open Motion experiments.
Scene tokens (agent history, interacting agents, roadgraph, traffic lights) are projected to a common width,
concatenated, compressed by a Perceiver-style latent query encoder and decoded by learned mode queries into a
GMM over future trajectories.

Attention uses FlashAttention-2 when it is installed and the inputs are fp16/bf16 CUDA tensors; otherwise it
falls back to torch.nn.functional.scaled_dot_product_attention.
"""
import math
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    from flash_attn import flash_attn_func
    HAS_FLASH_ATTN = True
except ImportError:  # CPU-only dev boxes
    flash_attn_func = None
    HAS_FLASH_ATTN = False


@dataclass
class WayformerConfig:
    d_model: int = 256
    num_heads: int = 4
    num_latents: int = 192
    num_encoder_layers: int = 2
    num_decoder_layers: int = 8
    num_modes: int = 64
    future_steps: int = 80
    dropout: float = 0.1
    ffn_mult: int = 4
    agent_feat_dim: int = 10
    road_feat_dim: int = 9
    tl_feat_dim: int = 6
    max_agents: int = 64
    max_road_polylines: int = 512
    history_steps: int = 11
    use_flash_attn: bool = True
    fusion: str = "early"
    extra: Dict[str, float] = field(default_factory=dict)


def sinusoidal_time_embedding(num_steps: int, dim: int, device=None) -> torch.Tensor:
    position = torch.arange(num_steps, device=device, dtype=torch.float32).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, dim, 2, device=device, dtype=torch.float32) * (-math.log(10000.0) / dim))
    pe = torch.zeros(num_steps, dim, device=device)
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe


class MLP(nn.Module):
    def __init__(self, in_dim: int, hidden_dim: int, out_dim: int, dropout: float = 0.0):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(in_dim, hidden_dim),
            nn.GELU(),
            nn.Dropout(dropout),
            nn.Linear(hidden_dim, out_dim),
        )

    def forward(self, x):
        return self.net(x)


class Attention(nn.Module):
    """Multi-head attention with an optional FlashAttention fast path."""

    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0, use_flash_attn: bool = True):
        super().__init__()
        assert d_model % num_heads == 0
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.scale = self.head_dim ** -0.5
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)
        self.dropout = dropout
        self.use_flash_attn = use_flash_attn and HAS_FLASH_ATTN

    def _flash_ok(self, q: torch.Tensor, mask: Optional[torch.Tensor]) -> bool:
        # flash-attn has no key padding mask in the dense API; masked scenes use SDPA
        return self.use_flash_attn and mask is None and q.is_cuda and q.dtype in (torch.float16, torch.bfloat16)

    def forward(self, x_q: torch.Tensor, x_kv: torch.Tensor, key_padding_mask: Optional[torch.Tensor] = None):
        B, Lq, _ = x_q.shape
        Lk = x_kv.shape[1]
        q = self.q_proj(x_q).view(B, Lq, self.num_heads, self.head_dim)
        k = self.k_proj(x_kv).view(B, Lk, self.num_heads, self.head_dim)
        v = self.v_proj(x_kv).view(B, Lk, self.num_heads, self.head_dim)
        dropout_p = self.dropout if self.training else 0.0

        if self._flash_ok(q, key_padding_mask):
            # flash_attn_func expects (batch, seqlen, nheads, headdim)
            out = flash_attn_func(q, k, v, dropout_p=dropout_p, softmax_scale=self.scale, causal=False)
            out = out.reshape(B, Lq, -1)
        else:
            q, k, v = (t.transpose(1, 2) for t in (q, k, v))  # (B, H, L, D)
            attn_mask = None
            if key_padding_mask is not None:
                # key_padding_mask: True = padded; SDPA boolean mask: True = attend
                attn_mask = (~key_padding_mask)[:, None, None, :].expand(B, 1, Lq, Lk)
            with torch.backends.cuda.sdp_kernel(enable_flash=False, enable_math=True, enable_mem_efficient=True):
                out = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, dropout_p=dropout_p)
            out = out.transpose(1, 2).reshape(B, Lq, -1)
        return self.out_proj(out)


class TransformerBlock(nn.Module):
    def __init__(self, d_model: int, num_heads: int, ffn_mult: int, dropout: float, use_flash_attn: bool, cross: bool):
        super().__init__()
        self.cross = cross
        self.norm_q = nn.LayerNorm(d_model)
        self.norm_kv = nn.LayerNorm(d_model) if cross else None
        self.attn = Attention(d_model, num_heads, dropout, use_flash_attn)
        self.norm_ff = nn.LayerNorm(d_model)
        self.ff = MLP(d_model, d_model * ffn_mult, d_model, dropout)
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, context: Optional[torch.Tensor] = None,
                key_padding_mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        q = self.norm_q(x)
        kv = self.norm_kv(context) if self.cross else q
        x = x + self.drop(self.attn(q, kv, key_padding_mask))
        x = x + self.drop(self.ff(self.norm_ff(x)))
        return x


class LatentQueryEncoder(nn.Module):
    """Perceiver-style encoder: learned latents cross-attend to all scene tokens, then self-attend."""

    def __init__(self, cfg: WayformerConfig):
        super().__init__()
        self.latents = nn.Parameter(torch.randn(cfg.num_latents, cfg.d_model) * 0.02)
        self.cross_block = TransformerBlock(cfg.d_model, cfg.num_heads, cfg.ffn_mult, cfg.dropout,
                                            cfg.use_flash_attn, cross=True)
        self.self_blocks = nn.ModuleList([
            TransformerBlock(cfg.d_model, cfg.num_heads, cfg.ffn_mult, cfg.dropout, cfg.use_flash_attn, cross=False)
            for _ in range(cfg.num_encoder_layers)
        ])

    def forward(self, tokens: torch.Tensor, token_mask: torch.Tensor) -> torch.Tensor:
        B = tokens.shape[0]
        lat = self.latents.unsqueeze(0).expand(B, -1, -1)
        lat = self.cross_block(lat, tokens, key_padding_mask=~token_mask)
        for blk in self.self_blocks:
            lat = blk(lat)
        return lat


class SceneProjector(nn.Module):
    """Projects every modality to d_model and adds temporal / type embeddings (early fusion)."""

    def __init__(self, cfg: WayformerConfig):
        super().__init__()
        self.cfg = cfg
        self.agent_proj = MLP(cfg.agent_feat_dim, cfg.d_model, cfg.d_model)
        self.road_proj = MLP(cfg.road_feat_dim, cfg.d_model, cfg.d_model)
        self.tl_proj = MLP(cfg.tl_feat_dim, cfg.d_model, cfg.d_model)
        self.type_embed = nn.Embedding(3, cfg.d_model)
        self.register_buffer("time_embed", sinusoidal_time_embedding(cfg.history_steps, cfg.d_model), persistent=False)

    def forward(self, batch: Dict[str, torch.Tensor]) -> Tuple[torch.Tensor, torch.Tensor]:
        agents = batch["agent_feats"]            # (B, A, T, F_a)
        agents_mask = batch["agent_mask"]        # (B, A, T)
        roads = batch["road_feats"]              # (B, R, F_r)
        roads_mask = batch["road_mask"]          # (B, R)
        tls = batch["tl_feats"]                  # (B, L, T, F_t)
        tls_mask = batch["tl_mask"]              # (B, L, T)

        B, A, T, _ = agents.shape
        a_tok = self.agent_proj(agents) + self.time_embed[None, None, :T] + self.type_embed.weight[0]
        a_tok = a_tok.reshape(B, A * T, -1)
        r_tok = self.road_proj(roads) + self.type_embed.weight[1]
        L = tls.shape[1]
        t_tok = self.tl_proj(tls) + self.time_embed[None, None, :T] + self.type_embed.weight[2]
        t_tok = t_tok.reshape(B, L * T, -1)

        tokens = torch.cat([a_tok, r_tok, t_tok], dim=1)
        mask = torch.cat([agents_mask.reshape(B, -1), roads_mask, tls_mask.reshape(B, -1)], dim=1)
        return tokens, mask


class GMMHead(nn.Module):
    def __init__(self, cfg: WayformerConfig):
        super().__init__()
        self.future_steps = cfg.future_steps
        self.traj = MLP(cfg.d_model, cfg.d_model * 2, cfg.future_steps * 4)
        self.logit = MLP(cfg.d_model, cfg.d_model, 1)

    def forward(self, mode_feats: torch.Tensor) -> Dict[str, torch.Tensor]:
        B, M, _ = mode_feats.shape
        params = self.traj(mode_feats).view(B, M, self.future_steps, 4)
        mean = params[..., :2]
        log_std = params[..., 2:].clamp(min=-5.0, max=5.0)
        logits = self.logit(mode_feats).squeeze(-1)
        return {"mean": mean, "log_std": log_std, "logits": logits}


class Wayformer(nn.Module):
    def __init__(self, cfg: WayformerConfig):
        super().__init__()
        self.cfg = cfg
        self.projector = SceneProjector(cfg)
        self.encoder = LatentQueryEncoder(cfg)
        self.mode_queries = nn.Parameter(torch.randn(cfg.num_modes, cfg.d_model) * 0.02)
        self.decoder = nn.ModuleList([
            TransformerBlock(cfg.d_model, cfg.num_heads, cfg.ffn_mult, cfg.dropout, cfg.use_flash_attn, cross=True)
            for _ in range(cfg.num_decoder_layers)
        ])
        # small vanilla transformer over the mode embeddings before the head ("mode interaction")
        self.mode_mixer = nn.TransformerEncoderLayer(cfg.d_model, cfg.num_heads, cfg.d_model * 2,
                                                     dropout=cfg.dropout, batch_first=True, norm_first=True)
        self.head = GMMHead(cfg)

    def forward(self, batch: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
        tokens, mask = self.projector(batch)
        memory = self.encoder(tokens, mask)
        B = memory.shape[0]
        q = self.mode_queries.unsqueeze(0).expand(B, -1, -1)
        for blk in self.decoder:
            q = blk(q, memory)
        q = self.mode_mixer(q)
        return self.head(q)


def gmm_nll_loss(pred: Dict[str, torch.Tensor], gt: torch.Tensor, gt_mask: torch.Tensor) -> Tuple[torch.Tensor, Dict[str, float]]:
    """Hard-assignment GMM loss: regression on the closest mode + classification over modes."""
    mean, log_std, logits = pred["mean"], pred["log_std"], pred["logits"]
    valid = gt_mask.float()                                          # (B, T)
    dist = ((mean - gt[:, None]) ** 2).sum(-1).sqrt()                # (B, M, T)
    ade = (dist * valid[:, None]).sum(-1) / valid.sum(-1, keepdim=True).clamp(min=1.0)
    best = ade.argmin(dim=-1)                                        # (B,)
    idx = torch.arange(mean.shape[0], device=mean.device)
    m, s = mean[idx, best], log_std[idx, best]
    nll = (0.5 * ((gt - m) / s.exp()) ** 2 + s).sum(-1)              # (B, T)
    reg = (nll * valid).sum() / valid.sum().clamp(min=1.0)
    cls = F.cross_entropy(logits, best)
    loss = reg + cls
    return loss, {"reg": reg.item(), "cls": cls.item(), "minADE": ade.min(-1)[0].mean().item()}
