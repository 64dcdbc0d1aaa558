import math
import torch
import torch.nn as nn
from typing import Optional, Tuple, Union
from diffusers.models.autoencoders.vae import Encoder, Decoder, DiagonalGaussianDistribution
from diffusers.models.autoencoders.autoencoder_kl import AutoencoderKL
from diffusers.models.modeling_outputs import AutoencoderKLOutput
from diffusers.models.autoencoders.vae import DecoderOutput


class AutoencoderKLFastDecode(AutoencoderKL):
    """AutoencoderKL whose forward only returns the decoded sample (used for the surface / edge VAE)."""

    def forward(self, sample: torch.FloatTensor, sample_posterior: bool = False, return_dict: bool = True,
                generator: Optional[torch.Generator] = None) -> Union[DecoderOutput, torch.FloatTensor]:
        posterior = self.encode(sample).latent_dist
        if sample_posterior:
            z = posterior.sample(generator=generator)
        else:
            z = posterior.mode()
        dec = self.decode(z).sample
        if not return_dict:
            return (dec,)
        return DecoderOutput(sample=dec)


class AutoencoderKLFastEncode(AutoencoderKL):
    """AutoencoderKL whose forward returns the posterior mode (fast latent extraction for the LDM)."""

    def forward(self, x: torch.FloatTensor, return_dict: bool = True) -> torch.FloatTensor:
        h = self.encoder(x)
        moments = self.quant_conv(h)
        posterior = DiagonalGaussianDistribution(moments)
        return posterior.mode()


def sincos_embedding(input, dim, max_period=10000):
    """
    Create sinusoidal timestep embeddings.
    :param input: a N-D Tensor of indices, one per batch element.
    :param dim: the dimension of the output.
    :param max_period: controls the minimum frequency of the embeddings.
    :return: an [N x dim] Tensor of positional embeddings.
    """
    half = dim // 2
    freqs = torch.exp(
        -math.log(max_period) * torch.arange(start=0, end=half, dtype=torch.float32) / half
    ).to(device=input.device)
    for _ in range(len(input.size())):
        freqs = freqs[None]
    args = input.unsqueeze(-1).float() * freqs
    embedding = torch.cat([torch.cos(args), torch.sin(args)], dim=-1)
    if dim % 2:
        embedding = torch.cat([embedding, torch.zeros_like(embedding[:, :1])], dim=-1)
    return embedding


class Embedder(nn.Module):
    def __init__(self, vocab_size, d_model):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)
        nn.init.kaiming_normal_(self.embed.weight, mode="fan_in")

    def forward(self, x):
        return self.embed(x)


class SurfPosNet(nn.Module):
    """
    Transformer-based latent diffusion model for surface position
    """

    def __init__(self, use_cf):
        super(SurfPosNet, self).__init__()
        self.embed_dim = 768
        self.use_cf = use_cf

        layer = nn.TransformerEncoderLayer(d_model=self.embed_dim, nhead=12, norm_first=True,
                                           dim_feedforward=1024, dropout=0.1)
        self.net = nn.TransformerEncoder(layer, 12, nn.LayerNorm(self.embed_dim))

        self.p_embed = nn.Sequential(
            nn.Linear(6, self.embed_dim),
            nn.LayerNorm(self.embed_dim),
            nn.SiLU(),
            nn.Linear(self.embed_dim, self.embed_dim),
        )

        self.time_embed = nn.Sequential(
            nn.Linear(self.embed_dim, self.embed_dim),
            nn.LayerNorm(self.embed_dim),
            nn.SiLU(),
            nn.Linear(self.embed_dim, self.embed_dim),
        )

        if self.use_cf:
            self.class_embed = Embedder(11, self.embed_dim)

        self.fc_out = nn.Sequential(
            nn.Linear(self.embed_dim, self.embed_dim),
            nn.LayerNorm(self.embed_dim),
            nn.SiLU(),
            nn.Linear(self.embed_dim, 6),
        )
        return

    def forward(self, surfPos, timesteps, class_label, is_train=False):
        """ forward pass """
        bsz = timesteps.size(0)
        time_embeds = self.time_embed(sincos_embedding(timesteps, self.embed_dim)).unsqueeze(1)
        p_embeds = self.p_embed(surfPos)

        if self.use_cf:  # classifier-free
            if is_train:
                # randomly set 10% to uncond label
                uncond_mask = torch.rand(bsz, 1) <= 0.1
                class_label[uncond_mask] = 0
            c_embeds = self.class_embed(class_label.squeeze(-1)).unsqueeze(1)
            tokens = p_embeds + time_embeds + c_embeds
        else:
            tokens = p_embeds + time_embeds

        output = self.net(src=tokens.permute(1, 0, 2)).transpose(0, 1)
        pred = self.fc_out(output)

        return pred


class SurfZNet(nn.Module):
    """
    Transformer-based latent diffusion model for surface latent geometry
    """

    def __init__(self, use_cf):
        super(SurfZNet, self).__init__()
        self.embed_dim = 768
        self.use_cf = use_cf

        layer = nn.TransformerEncoderLayer(d_model=self.embed_dim, nhead=12, norm_first=True,
                                           dim_feedforward=1024, dropout=0.1)
        self.net = nn.TransformerEncoder(layer, 12, nn.LayerNorm(self.embed_dim))

        self.z_embed = nn.Sequential(
            nn.Linear(3 * 16, self.embed_dim),
            nn.LayerNorm(self.embed_dim),
            nn.SiLU(),
            nn.Linear(self.embed_dim, self.embed_dim),
        )

        self.p_embed = nn.Sequential(
            nn.Linear(6, self.embed_dim),
            nn.LayerNorm(self.embed_dim),
            nn.SiLU(),
            nn.Linear(self.embed_dim, self.embed_dim),
        )

        self.time_embed = nn.Sequential(
            nn.Linear(self.embed_dim, self.embed_dim),
            nn.LayerNorm(self.embed_dim),
            nn.SiLU(),
            nn.Linear(self.embed_dim, self.embed_dim),
        )

        if self.use_cf:
            self.class_embed = Embedder(11, self.embed_dim)

        self.fc_out = nn.Sequential(
            nn.Linear(self.embed_dim, self.embed_dim),
            nn.LayerNorm(self.embed_dim),
            nn.SiLU(),
            nn.Linear(self.embed_dim, 3 * 16),
        )
        return

    def forward(self, surfZ, timesteps, surfPos, surf_mask, class_label, is_train=False):
        """ forward pass """
        bsz = timesteps.size(0)

        """ phase 1: encode surface latents + positions as tokens """
        time_embeds = self.time_embed(sincos_embedding(timesteps, self.embed_dim)).unsqueeze(1)
        z_embeds = self.z_embed(surfZ)
        p_embeds = self.p_embed(surfPos)

        if self.use_cf:  # classifier-free
            if is_train:
                # randomly set 10% to uncond label
                uncond_mask = torch.rand(bsz, 1) <= 0.1
                class_label[uncond_mask] = 0
            c_embeds = self.class_embed(class_label.squeeze(-1)).unsqueeze(1)
            tokens = z_embeds + p_embeds + time_embeds + c_embeds
        else:
            tokens = z_embeds + p_embeds + time_embeds

        output = self.net(
            src=tokens.permute(1, 0, 2),
            src_key_padding_mask=surf_mask,
        ).transpose(0, 1)

        pred = self.fc_out(output)
        return pred
