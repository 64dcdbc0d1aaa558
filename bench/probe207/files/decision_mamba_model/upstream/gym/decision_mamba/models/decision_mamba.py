"""Decision Mamba: the Decision Transformer's GPT-2 trunk replaced by a stack of
selective-state-space (Mamba) blocks, with an optional causal-attention block
every ``attn_every`` layers ("hybrid" variant).

Requires the CUDA kernels from ``mamba_ssm`` (selective scan) and
``causal_conv1d``; see requirements-mamba.txt.
"""
import math
from dataclasses import dataclass, field
from functools import partial
from typing import Optional

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from mamba_ssm.modules.mamba_simple import Mamba, Block
from mamba_ssm.models.mixer_seq_simple import _init_weights

try:
    from mamba_ssm.ops.triton.layer_norm import RMSNorm, layer_norm_fn, rms_norm_fn
except ImportError:
    RMSNorm, layer_norm_fn, rms_norm_fn = None, None, None

try:
    from flash_attn import flash_attn_func
except ImportError:  # fall back to PyTorch SDPA
    flash_attn_func = None

from decision_transformer.models.model import TrajectoryModel


@dataclass
class DMambaConfig:
    d_model: int = 128
    n_layer: int = 3
    d_state: int = 16
    d_conv: int = 4
    expand: int = 2
    rms_norm: bool = True
    residual_in_fp32: bool = True
    fused_add_norm: bool = True
    attn_every: int = 0
    n_head: int = 1
    dropout: float = 0.1
    ssm_cfg: dict = field(default_factory=dict)


def create_block(
    d_model,
    ssm_cfg=None,
    norm_epsilon=1e-5,
    rms_norm=False,
    residual_in_fp32=False,
    fused_add_norm=False,
    layer_idx=None,
    device=None,
    dtype=None,
):
    if ssm_cfg is None:
        ssm_cfg = {}
    factory_kwargs = {"device": device, "dtype": dtype}
    mixer_cls = partial(Mamba, layer_idx=layer_idx, **ssm_cfg, **factory_kwargs)
    norm_cls = partial(
        nn.LayerNorm if not rms_norm else RMSNorm, eps=norm_epsilon, **factory_kwargs
    )
    block = Block(
        d_model,
        mixer_cls,
        norm_cls=norm_cls,
        fused_add_norm=fused_add_norm,
        residual_in_fp32=residual_in_fp32,
    )
    block.layer_idx = layer_idx
    return block


class CausalSelfAttention(nn.Module):
    """Plain causal attention used by the hybrid variant."""

    def __init__(self, d_model, n_head, dropout):
        super().__init__()
        assert d_model % n_head == 0
        self.n_head = n_head
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.dropout = dropout
        self.norm = nn.LayerNorm(d_model)

    def forward(self, x):
        B, T, C = x.shape
        h = self.norm(x)
        q, k, v = self.qkv(h).split(C, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head)
        k = k.view(B, T, self.n_head, C // self.n_head)
        v = v.view(B, T, self.n_head, C // self.n_head)
        p = self.dropout if self.training else 0.0
        if flash_attn_func is not None and x.dtype in (torch.float16, torch.bfloat16):
            y = flash_attn_func(q, k, v, dropout_p=p, causal=True)
        else:
            y = F.scaled_dot_product_attention(
                q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                dropout_p=p, is_causal=True,
            ).transpose(1, 2)
        y = y.reshape(B, T, C)
        return x + self.proj(y)


class MixerTrunk(nn.Module):
    def __init__(self, cfg: DMambaConfig, device=None, dtype=None):
        super().__init__()
        self.cfg = cfg
        self.residual_in_fp32 = cfg.residual_in_fp32
        self.fused_add_norm = cfg.fused_add_norm
        if self.fused_add_norm:
            if layer_norm_fn is None or rms_norm_fn is None:
                raise ImportError("Failed to import Triton LayerNorm / RMSNorm kernels")

        self.layers = nn.ModuleList(
            [
                create_block(
                    cfg.d_model,
                    ssm_cfg=dict(d_state=cfg.d_state, d_conv=cfg.d_conv, expand=cfg.expand, **cfg.ssm_cfg),
                    rms_norm=cfg.rms_norm,
                    residual_in_fp32=cfg.residual_in_fp32,
                    fused_add_norm=cfg.fused_add_norm,
                    layer_idx=i,
                    device=device,
                    dtype=dtype,
                )
                for i in range(cfg.n_layer)
            ]
        )
        self.attn = nn.ModuleDict()
        if cfg.attn_every > 0:
            for i in range(cfg.attn_every - 1, cfg.n_layer, cfg.attn_every):
                self.attn[str(i)] = CausalSelfAttention(cfg.d_model, cfg.n_head, cfg.dropout)

        self.norm_f = (nn.LayerNorm if not cfg.rms_norm else RMSNorm)(cfg.d_model, eps=1e-5)
        self.apply(partial(_init_weights, n_layer=cfg.n_layer))

    def forward(self, hidden_states, inference_params=None):
        residual = None
        for i, layer in enumerate(self.layers):
            hidden_states, residual = layer(
                hidden_states, residual, inference_params=inference_params
            )
            if str(i) in self.attn:
                hidden_states = self.attn[str(i)](hidden_states)
        if not self.fused_add_norm:
            residual = (hidden_states + residual) if residual is not None else hidden_states
            hidden_states = self.norm_f(residual.to(dtype=self.norm_f.weight.dtype))
        else:
            # Set prenorm=False here since we don't need the residual
            fused_add_norm_fn = rms_norm_fn if isinstance(self.norm_f, RMSNorm) else layer_norm_fn
            hidden_states = fused_add_norm_fn(
                hidden_states,
                self.norm_f.weight,
                self.norm_f.bias,
                eps=self.norm_f.eps,
                residual=residual,
                prenorm=False,
                residual_in_fp32=self.residual_in_fp32,
            )
        return hidden_states


class DecisionMamba(TrajectoryModel):
    """
    Same interface as DecisionTransformer: (R_1, s_1, a_1, R_2, s_2, a_2, ...)
    """

    def __init__(
            self,
            state_dim,
            act_dim,
            hidden_size,
            max_length=None,
            max_ep_len=4096,
            action_tanh=True,
            **kwargs
    ):
        super().__init__(state_dim, act_dim, max_length=max_length)

        self.hidden_size = hidden_size
        cfg = DMambaConfig(d_model=hidden_size, **kwargs)
        self.trunk = MixerTrunk(cfg)

        self.embed_timestep = nn.Embedding(max_ep_len, hidden_size)
        self.embed_return = torch.nn.Linear(1, hidden_size)
        self.embed_state = torch.nn.Linear(self.state_dim, hidden_size)
        self.embed_action = torch.nn.Linear(self.act_dim, hidden_size)

        self.embed_ln = nn.LayerNorm(hidden_size)

        self.predict_state = torch.nn.Linear(hidden_size, self.state_dim)
        self.predict_action = nn.Sequential(
            *([nn.Linear(hidden_size, self.act_dim)] + ([nn.Tanh()] if action_tanh else []))
        )
        self.predict_return = torch.nn.Linear(hidden_size, 1)

    def forward(self, states, actions, rewards, returns_to_go, timesteps, attention_mask=None):

        batch_size, seq_length = states.shape[0], states.shape[1]

        if attention_mask is None:
            # attention mask for GPT: 1 if can be attended to, 0 if not
            attention_mask = torch.ones((batch_size, seq_length), dtype=torch.long, device=states.device)

        state_embeddings = self.embed_state(states)
        action_embeddings = self.embed_action(actions)
        returns_embeddings = self.embed_return(returns_to_go)
        time_embeddings = self.embed_timestep(timesteps)

        state_embeddings = state_embeddings + time_embeddings
        action_embeddings = action_embeddings + time_embeddings
        returns_embeddings = returns_embeddings + time_embeddings

        stacked_inputs = torch.stack(
            (returns_embeddings, state_embeddings, action_embeddings), dim=1
        ).permute(0, 2, 1, 3).reshape(batch_size, 3*seq_length, self.hidden_size)
        stacked_inputs = self.embed_ln(stacked_inputs)
        # left padding is zeroed so the recurrent scan starts from a clean state
        stacked_mask = torch.stack(
            (attention_mask, attention_mask, attention_mask), dim=1
        ).permute(0, 2, 1).reshape(batch_size, 3*seq_length)
        stacked_inputs = stacked_inputs * stacked_mask.unsqueeze(-1).to(stacked_inputs.dtype)

        x = self.trunk(stacked_inputs)
        x = x.reshape(batch_size, seq_length, 3, self.hidden_size).permute(0, 2, 1, 3)

        return_preds = self.predict_return(x[:,2])
        state_preds = self.predict_state(x[:,2])
        action_preds = self.predict_action(x[:,1])

        return state_preds, action_preds, return_preds

    def get_action(self, states, actions, rewards, returns_to_go, timesteps, **kwargs):
        states = states.reshape(1, -1, self.state_dim)
        actions = actions.reshape(1, -1, self.act_dim)
        returns_to_go = returns_to_go.reshape(1, -1, 1)
        timesteps = timesteps.reshape(1, -1)

        if self.max_length is not None:
            states = states[:,-self.max_length:]
            actions = actions[:,-self.max_length:]
            returns_to_go = returns_to_go[:,-self.max_length:]
            timesteps = timesteps[:,-self.max_length:]

            attention_mask = torch.cat([torch.zeros(self.max_length-states.shape[1]), torch.ones(states.shape[1])])
            attention_mask = attention_mask.to(dtype=torch.long, device=states.device).reshape(1, -1)
            states = torch.cat(
                [torch.zeros((states.shape[0], self.max_length-states.shape[1], self.state_dim), device=states.device), states],
                dim=1).to(dtype=torch.float32)
            actions = torch.cat(
                [torch.zeros((actions.shape[0], self.max_length - actions.shape[1], self.act_dim),
                             device=actions.device), actions],
                dim=1).to(dtype=torch.float32)
            returns_to_go = torch.cat(
                [torch.zeros((returns_to_go.shape[0], self.max_length-returns_to_go.shape[1], 1), device=returns_to_go.device), returns_to_go],
                dim=1).to(dtype=torch.float32)
            timesteps = torch.cat(
                [torch.zeros((timesteps.shape[0], self.max_length-timesteps.shape[1]), device=timesteps.device), timesteps],
                dim=1
            ).to(dtype=torch.long)
        else:
            attention_mask = None

        _, action_preds, return_preds = self.forward(
            states, actions, None, returns_to_go, timesteps, attention_mask=attention_mask, **kwargs)

        return action_preds[0,-1]
