"""
Action heads for the PyTorch Octo port: a continuous L1 regression head and the
DDPM diffusion head used by the released octo-small / octo-base checkpoints.
"""
import math
from typing import Dict, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from einops import rearrange
from torch.cuda.amp import autocast

from octo_pytorch.model.components.base import TokenGroup
from octo_pytorch.model.components.diffusion import create_diffusion_model, cosine_beta_schedule


def masked_mean(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    mask = torch.broadcast_to(mask, x.shape).to(x.dtype)
    return (x * mask).sum() / torch.clamp(mask.sum(), min=1e-5)


def continuous_loss(
    pred_value: torch.Tensor, ground_truth_value: torch.Tensor, mask: torch.Tensor, loss_type: str = "mse"
) -> Tuple[torch.Tensor, Dict[str, torch.Tensor]]:
    if loss_type == "mse":
        loss = (pred_value - ground_truth_value) ** 2
    elif loss_type == "l1":
        loss = torch.abs(pred_value - ground_truth_value)
    else:
        raise ValueError(f"Invalid loss type: {loss_type}")
    loss = masked_mean(loss, mask)
    mse = masked_mean((pred_value - ground_truth_value) ** 2, mask)
    return loss, {"loss": loss, "mse": mse}


def chunk_actions(actions: torch.Tensor, action_horizon: int) -> torch.Tensor:
    """(batch, window + horizon - 1, dim) -> (batch, window, horizon, dim)"""
    window = actions.shape[1] - action_horizon + 1
    idx = torch.arange(window, device=actions.device)[:, None] + torch.arange(action_horizon, device=actions.device)
    return actions[:, idx]


class MAPHead(nn.Module):
    """Multihead attention pooling over readout tokens."""

    def __init__(self, embedding_size: int, num_heads: int = 8, num_readouts: int = 1, mlp_dim: Optional[int] = None):
        super().__init__()
        self.probe = nn.Parameter(torch.empty(1, num_readouts, embedding_size))
        nn.init.xavier_uniform_(self.probe)
        self.attn = nn.MultiheadAttention(embedding_size, num_heads, batch_first=True)
        self.norm = nn.LayerNorm(embedding_size, eps=1e-6)
        mlp_dim = mlp_dim or 4 * embedding_size
        self.mlp = nn.Sequential(nn.Linear(embedding_size, mlp_dim), nn.GELU(approximate="tanh"), nn.Linear(mlp_dim, embedding_size))

    def forward(self, x: torch.Tensor, mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        *batch_dims, l, d = x.shape
        x = x.reshape(-1, l, d)
        probe = self.probe.expand(x.shape[0], -1, -1)
        key_padding_mask = None
        if mask is not None:
            key_padding_mask = ~mask.reshape(-1, l)
        out, _ = self.attn(probe, x, x, key_padding_mask=key_padding_mask, need_weights=False)
        out = out + self.mlp(self.norm(out))
        return out.reshape(*batch_dims, -1, d)


class L1ActionHead(nn.Module):
    def __init__(
        self,
        readout_key: str,
        embedding_size: int,
        action_horizon: int = 1,
        action_dim: int = 7,
        max_action: float = 5.0,
        use_map: bool = False,
    ):
        super().__init__()
        self.readout_key = readout_key
        self.action_horizon = action_horizon
        self.action_dim = action_dim
        self.max_action = max_action
        self.map_head = MAPHead(embedding_size) if use_map else None
        self.mean_proj = nn.Linear(embedding_size, action_horizon * action_dim)

    def forward(self, transformer_outputs: Dict[str, TokenGroup]) -> torch.Tensor:
        token_group = transformer_outputs[self.readout_key]
        if self.map_head is not None:
            embeddings = self.map_head(token_group.tokens, mask=token_group.mask)[..., 0, :]
        else:
            embeddings = token_group.tokens.mean(dim=-2)
        mean = self.mean_proj(embeddings)
        mean = rearrange(mean, "b w (h a) -> b w h a", h=self.action_horizon, a=self.action_dim)
        return torch.tanh(mean / self.max_action) * self.max_action

    def loss(self, transformer_outputs, actions, timestep_pad_mask, action_pad_mask):
        mean = self(transformer_outputs)
        actions_chunked = chunk_actions(actions, self.action_horizon)
        mask = timestep_pad_mask[:, :, None, None] & action_pad_mask
        return continuous_loss(mean, actions_chunked, mask, loss_type="l1")

    def predict_action(self, transformer_outputs, generator: Optional[torch.Generator] = None) -> torch.Tensor:
        return self(transformer_outputs)[:, -1]


class DiffusionActionHead(nn.Module):
    """
    Predicts actions with a small residual MLP denoiser conditioned on the readout embedding.
    The noise-schedule arithmetic is kept in fp32 (autocast disabled) because alpha_hat products
    underflow in fp16 for the last diffusion steps.
    """

    def __init__(
        self,
        readout_key: str,
        embedding_size: int,
        action_horizon: int = 1,
        action_dim: int = 7,
        max_action: float = 5.0,
        use_map: bool = False,
        time_dim: int = 32,
        num_blocks: int = 3,
        dropout_rate: float = 0.0,
        hidden_dim: int = 256,
        use_layer_norm: bool = True,
        diffusion_steps: int = 20,
        n_diffusion_samples: int = 1,
    ):
        super().__init__()
        self.readout_key = readout_key
        self.action_horizon = action_horizon
        self.action_dim = action_dim
        self.max_action = max_action
        self.diffusion_steps = diffusion_steps
        self.n_diffusion_samples = n_diffusion_samples
        self.map_head = MAPHead(embedding_size) if use_map else None
        self.diffusion_model = create_diffusion_model(
            embedding_size,
            action_dim * action_horizon,
            time_dim=time_dim,
            num_blocks=num_blocks,
            dropout_rate=dropout_rate,
            hidden_dim=hidden_dim,
            use_layer_norm=use_layer_norm,
        )
        betas = cosine_beta_schedule(diffusion_steps).float()
        alphas = 1.0 - betas
        self.register_buffer("betas", betas, persistent=False)
        self.register_buffer("alphas", alphas, persistent=False)
        self.register_buffer("alpha_hats", torch.cumprod(alphas, dim=0), persistent=False)

    def _embed(self, transformer_outputs):
        token_group = transformer_outputs[self.readout_key]
        if self.map_head is not None:
            return self.map_head(token_group.tokens, mask=token_group.mask)[..., 0, :]
        return token_group.tokens.mean(dim=-2)

    @autocast(enabled=False)
    def _add_noise(self, x0: torch.Tensor, time: torch.Tensor, noise: torch.Tensor) -> torch.Tensor:
        alpha_hat = self.alpha_hats[time]
        return torch.sqrt(alpha_hat) * x0.float() + torch.sqrt(1 - alpha_hat) * noise.float()

    def forward(self, transformer_outputs, time: torch.Tensor, noisy_actions: torch.Tensor) -> torch.Tensor:
        embeddings = self._embed(transformer_outputs)
        return self.diffusion_model(embeddings, noisy_actions, time)

    def loss(self, transformer_outputs, actions, timestep_pad_mask, action_pad_mask):
        b, w = timestep_pad_mask.shape
        actions_chunked = chunk_actions(actions, self.action_horizon)
        actions_flat = rearrange(actions_chunked, "b w h a -> b w (h a)")
        actions_flat = torch.clamp(actions_flat, -self.max_action, self.max_action)

        time = torch.randint(0, self.diffusion_steps, (self.n_diffusion_samples, b, w, 1), device=actions.device)
        noise = torch.randn((self.n_diffusion_samples,) + actions_flat.shape, device=actions.device)
        noisy_actions = self._add_noise(actions_flat[None], time, noise)

        pred_eps = self(transformer_outputs, time, noisy_actions)
        mask = timestep_pad_mask[:, :, None, None] & action_pad_mask
        mask = rearrange(mask, "b w h a -> b w (h a)")[None]
        return continuous_loss(pred_eps, noise, mask, loss_type="mse")

    @autocast(enabled=False)
    def _denoise_step(self, x_t, eps_pred, t, z):
        alpha_1 = 1 / torch.sqrt(self.alphas[t])
        alpha_2 = (1 - self.alphas[t]) / torch.sqrt(1 - self.alpha_hats[t])
        x_t = alpha_1 * (x_t.float() - alpha_2 * eps_pred.float())
        if t > 0:
            x_t = x_t + torch.sqrt(self.betas[t]) * z
        return torch.clamp(x_t, -self.max_action, self.max_action)

    @torch.no_grad()
    def predict_action(self, transformer_outputs, generator: Optional[torch.Generator] = None) -> torch.Tensor:
        embeddings = self._embed(transformer_outputs)
        b, w = embeddings.shape[:2]
        shape = (b, w, self.action_dim * self.action_horizon)
        x_t = torch.randn(shape, device=embeddings.device, generator=generator)
        for t in reversed(range(self.diffusion_steps)):
            time = torch.full((b, w, 1), t, device=embeddings.device, dtype=torch.long)
            eps_pred = self.diffusion_model(embeddings, x_t, time)
            z = torch.randn(shape, device=embeddings.device, generator=generator)
            x_t = self._denoise_step(x_t, eps_pred, t, z)
        actions = rearrange(x_t, "b w (h a) -> b w h a", h=self.action_horizon, a=self.action_dim)
        return actions[:, -1]
