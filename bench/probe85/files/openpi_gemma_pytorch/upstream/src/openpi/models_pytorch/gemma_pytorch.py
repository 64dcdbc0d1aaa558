"""PaliGemma prefix + Gemma action expert sharing one attention stack (PyTorch).

The two towers keep separate weights but attend jointly: queries/keys/values of both are concatenated along the
sequence axis in every layer. The expert's RMSNorm can be modulated by the flow-matching time embedding (adaRMS,
pi0.5).
"""

import math
from typing import Literal, Optional

import torch
import torch.nn.functional as F  # noqa: N812
from torch import nn
from transformers import GemmaConfig, PaliGemmaForConditionalGeneration
from transformers.utils import is_flash_attn_2_available

# The memory-efficient SDPA kernel produced NaNs for fully masked rows (padding-only prefix rows) in bf16;
# math and flash stay enabled.
torch.backends.cuda.enable_mem_efficient_sdp(False)


class GemmaRMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6, cond_dim: Optional[int] = None):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.zeros(dim))
        self.cond_dim = cond_dim
        if cond_dim is not None:
            # adaRMS: scale, shift and gate predicted from the conditioning vector
            self.modulation = nn.Linear(cond_dim, 3 * dim)
            nn.init.zeros_(self.modulation.weight)
            nn.init.zeros_(self.modulation.bias)

    def _norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

    def forward(self, x, cond=None):
        if cond is None:
            output = self._norm(x.float())
            # Llama does x.to(float16) * w whilst Gemma is (x * w).to(float16)
            output = output * (1.0 + self.weight.float())
            return output.type_as(x), None

        scale, shift, gate = self.modulation(cond)[:, None, :].chunk(3, dim=-1)
        output = self._norm(x.float()) * (1.0 + scale.float()) + shift.float()
        return output.type_as(x), gate


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


class GemmaRotaryEmbedding(nn.Module):
    def __init__(self, head_dim: int, base: float = 10000.0):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.int64).float() / head_dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    @torch.no_grad()
    def forward(self, x, position_ids):
        inv_freq_expanded = self.inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
        position_ids_expanded = position_ids[:, None, :].float()
        # Force float32 (see https://github.com/huggingface/transformers/pull/29285)
        device_type = x.device.type if x.device.type != "mps" else "cpu"
        with torch.autocast(device_type=device_type, enabled=False):
            freqs = (inv_freq_expanded.float() @ position_ids_expanded.float()).transpose(1, 2)
            emb = torch.cat((freqs, freqs), dim=-1)
            cos = emb.cos()
            sin = emb.sin()
        return cos.to(dtype=x.dtype), sin.to(dtype=x.dtype)


class GemmaMLP(nn.Module):
    def __init__(self, width: int, mlp_dim: int):
        super().__init__()
        self.gate_proj = nn.Linear(width, mlp_dim, bias=False)
        self.up_proj = nn.Linear(width, mlp_dim, bias=False)
        self.down_proj = nn.Linear(mlp_dim, width, bias=False)

    def forward(self, x):
        return self.down_proj(F.gelu(self.gate_proj(x), approximate="tanh") * self.up_proj(x))


class GemmaAttentionProj(nn.Module):
    def __init__(self, width: int, num_heads: int, num_kv_heads: int, head_dim: int):
        super().__init__()
        self.num_heads, self.num_kv_heads, self.head_dim = num_heads, num_kv_heads, head_dim
        self.q_proj = nn.Linear(width, num_heads * head_dim, bias=False)
        self.k_proj = nn.Linear(width, num_kv_heads * head_dim, bias=False)
        self.v_proj = nn.Linear(width, num_kv_heads * head_dim, bias=False)
        self.o_proj = nn.Linear(num_heads * head_dim, width, bias=False)


class ExpertLayer(nn.Module):
    def __init__(self, cfg, use_adarms: bool):
        super().__init__()
        cond_dim = cfg.width if use_adarms else None
        self.input_layernorm = GemmaRMSNorm(cfg.width, cond_dim=cond_dim)
        self.self_attn = GemmaAttentionProj(cfg.width, cfg.num_heads, cfg.num_kv_heads, cfg.head_dim)
        self.post_attention_layernorm = GemmaRMSNorm(cfg.width, cond_dim=cond_dim)
        self.mlp = GemmaMLP(cfg.width, cfg.mlp_dim)


class GemmaExpert(nn.Module):
    def __init__(self, cfg, use_adarms: bool):
        super().__init__()
        self.layers = nn.ModuleList([ExpertLayer(cfg, use_adarms) for _ in range(cfg.depth)])
        self.norm = GemmaRMSNorm(cfg.width, cond_dim=cfg.width if use_adarms else None)


class PaliGemmaWithExpertModel(nn.Module):
    def __init__(
        self,
        vlm_config,
        action_expert_config,
        use_adarms=(False, False),
        precision: Literal["bfloat16", "float32"] = "bfloat16",
    ):
        super().__init__()
        hf_config = GemmaConfig(
            hidden_size=vlm_config.width,
            intermediate_size=vlm_config.mlp_dim,
            num_attention_heads=vlm_config.num_heads,
            num_key_value_heads=vlm_config.num_kv_heads,
            head_dim=vlm_config.head_dim,
            num_hidden_layers=vlm_config.depth,
            hidden_activation="gelu_pytorch_tanh",
        )
        # flash-attn only where it is installed; otherwise the fused SDPA path
        attn_implementation = "flash_attention_2" if is_flash_attn_2_available() else "sdpa"
        self.paligemma = PaliGemmaForConditionalGeneration.from_config(
            hf_config, attn_implementation=attn_implementation
        )
        self.gemma_expert = GemmaExpert(action_expert_config, use_adarms[1])
        self.rotary_emb = GemmaRotaryEmbedding(vlm_config.head_dim)
        self.head_dim = vlm_config.head_dim
        self.num_heads = vlm_config.num_heads
        self.num_kv_heads = vlm_config.num_kv_heads
        if precision == "bfloat16":
            self.to(torch.bfloat16)

    def embed_image(self, image: torch.Tensor):
        return self.paligemma.model.get_image_features(image)

    def embed_language_tokens(self, tokens: torch.Tensor):
        return self.paligemma.language_model.embed_tokens(tokens)

    def _attend(self, q, k, v, attention_mask):
        # q: (b, h, n, d); k/v: (b, kvh, m, d); attention_mask: additive (b, 1, n, m)
        groups = self.num_heads // self.num_kv_heads
        k = k.repeat_interleave(groups, dim=1)
        v = v.repeat_interleave(groups, dim=1)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=attention_mask, scale=self.head_dim**-0.5)

    def forward(
        self,
        attention_mask=None,
        position_ids=None,
        past_key_values=None,
        inputs_embeds=None,
        use_cache=False,
        adarms_cond=(None, None),
    ):
        towers = [self.paligemma.language_model, self.gemma_expert]
        if past_key_values is None and use_cache:
            past_key_values = {}
        ref = next(h for h in inputs_embeds if h is not None)
        cos, sin = self.rotary_emb(ref, position_ids)

        for layer_idx in range(len(self.gemma_expert.layers)):
            qs, ks, vs, gates, lens = [], [], [], [], []
            for i, hidden in enumerate(inputs_embeds):
                if hidden is None:
                    continue
                layer = towers[i].layers[layer_idx]
                normed, gate = layer.input_layernorm(hidden, cond=adarms_cond[i]) if i == 1 else (layer.input_layernorm(hidden)[0] if isinstance(layer.input_layernorm, GemmaRMSNorm) else layer.input_layernorm(hidden), None)
                b, n, _ = normed.shape
                attn = layer.self_attn
                qs.append(attn.q_proj(normed).view(b, n, -1, self.head_dim).transpose(1, 2))
                ks.append(attn.k_proj(normed).view(b, n, -1, self.head_dim).transpose(1, 2))
                vs.append(attn.v_proj(normed).view(b, n, -1, self.head_dim).transpose(1, 2))
                gates.append(gate)
                lens.append(n)

            q = torch.cat(qs, dim=2)
            k = torch.cat(ks, dim=2)
            v = torch.cat(vs, dim=2)
            q, k = apply_rotary_pos_emb(q, k, cos, sin)

            if use_cache:
                if layer_idx not in past_key_values:
                    past_key_values[layer_idx] = (k, v)
                else:
                    k = torch.cat([past_key_values[layer_idx][0], k], dim=2)
                    v = torch.cat([past_key_values[layer_idx][1], v], dim=2)

            out = self._attend(q, k, v, attention_mask).transpose(1, 2)
            out = out.reshape(out.shape[0], out.shape[1], self.num_heads * self.head_dim)

            new_embeds, start, j = [], 0, 0
            for i, hidden in enumerate(inputs_embeds):
                if hidden is None:
                    new_embeds.append(None)
                    continue
                layer = towers[i].layers[layer_idx]
                end = start + lens[j]
                attn_out = layer.self_attn.o_proj(out[:, start:end].to(layer.self_attn.o_proj.weight.dtype))
                if gates[j] is not None:
                    attn_out = attn_out * gates[j]
                hidden = hidden + attn_out
                normed, gate = layer.post_attention_layernorm(hidden, cond=adarms_cond[i]) if i == 1 else (layer.post_attention_layernorm(hidden)[0] if isinstance(layer.post_attention_layernorm, GemmaRMSNorm) else layer.post_attention_layernorm(hidden), None)
                mlp_out = layer.mlp(normed)
                if gate is not None:
                    mlp_out = mlp_out * gate
                new_embeds.append(hidden + mlp_out)
                start, j = end, j + 1
            inputs_embeds = new_embeds

        outputs = []
        for i, hidden in enumerate(inputs_embeds):
            if hidden is None:
                outputs.append(None)
                continue
            norm = towers[i].norm
            outputs.append(norm(hidden, cond=adarms_cond[i])[0] if isinstance(norm, GemmaRMSNorm) else norm(hidden))
        return outputs, past_key_values


def count_parameters(module: nn.Module) -> str:
    n = sum(p.numel() for p in module.parameters())
    return f"{n / 1e6:.1f}M" if n < 1e9 else f"{n / 1e9:.2f}B"


def _sanity_check_head_dim(cfg) -> None:
    if cfg.width % cfg.num_heads != 0 and cfg.head_dim * cfg.num_heads != cfg.width:
        raise ValueError(f"width {cfg.width} incompatible with {cfg.num_heads} heads of size {cfg.head_dim}")
    if math.log2(cfg.head_dim) % 1 != 0:
        raise ValueError("head_dim must be a power of two for the fused attention kernels")
