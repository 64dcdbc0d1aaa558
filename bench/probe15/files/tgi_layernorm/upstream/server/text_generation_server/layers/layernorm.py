import torch
from torch import nn

from text_generation_server.utils.import_utils import SYSTEM

# Monkey patching
@classmethod
def load_layer_norm(cls, prefix, weights, eps):
    weight = weights.get_tensor(f"{prefix}.weight")
    bias = weights.get_tensor(f"{prefix}.bias")
    with torch.device("meta"):
        ln = cls(weight.shape, eps=eps)

    ln.weight = torch.nn.Parameter(weight)
    ln.bias = torch.nn.Parameter(bias)
    return ln


@classmethod
def load_layer_norm_no_bias(cls, prefix, weights, eps):
    weight = weights.get_tensor(f"{prefix}.weight")
    with torch.device("meta"):
        ln = cls(weight.shape, eps=eps)

    ln.weight = torch.nn.Parameter(weight)
    ln.bias = None
    return ln


torch.nn.LayerNorm.load = load_layer_norm
torch.nn.LayerNorm.load_no_bias = load_layer_norm_no_bias

if SYSTEM == "cuda":
    import dropout_layer_norm

    class FastLayerNorm(nn.LayerNorm):
        def forward(self, hidden_states, residual=None):
            if hidden_states.shape[-1] > 8192:
                if residual is not None:
                    hidden_states += residual
                residual = hidden_states
                return super(FastLayerNorm, self).forward(hidden_states), residual
            else:
                (normed_hidden_states, residual, *rest) = dropout_layer_norm.dropout_add_ln_fwd(
                    hidden_states, residual, self.weight, self.bias, None, None, None, None,
                    0.0, self.eps, 1.0, 0, None, False, False,
                )
                if residual is None:
                    residual = hidden_states
                return normed_hidden_states, residual

elif SYSTEM == "rocm":
    from vllm._C import ops

    class FastLayerNorm(nn.LayerNorm):
        def forward(self, hidden_states, residual=None):
            if residual is not None:
                hidden_states += residual
            residual = hidden_states
            return super().forward(hidden_states), residual

else:
    class FastLayerNorm(nn.LayerNorm):
        def forward(self, hidden_states, residual=None):
            if residual is not None:
                hidden_states += residual
            residual = hidden_states
            return super().forward(hidden_states), residual


class FastRMSNorm(nn.Module):
    def __init__(self, weight: torch.Tensor, eps: float):
        super().__init__()
        self.weight = nn.Parameter(weight)
        self.variance_epsilon = eps

    @classmethod
    def load(cls, prefix, weights, eps=1e-6):
        weight = weights.get_tensor(f"{prefix}.weight")
        return cls(weight, eps)

    def forward(self, hidden_states, residual=None):
        if hidden_states.shape[-1] > 8192 or SYSTEM != "cuda":
            if residual is not None:
                hidden_states += residual
            residual = hidden_states

            hidden_states = hidden_states.to(torch.float32)
            variance = hidden_states.pow(2).mean(-1, keepdim=True)
            hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)

            # convert into half-precision if necessary
            if self.weight.dtype in [torch.float16, torch.bfloat16]:
                hidden_states = hidden_states.to(self.weight.dtype)
            return self.weight * hidden_states, residual
        else:
            # faster post attention rms norm
            normed_hidden_states, res, *rest = dropout_layer_norm.dropout_add_ln_fwd(
                hidden_states, residual, self.weight, None, None, None, None, None,
                0.0, self.variance_epsilon, 1.0, 0, None, False, True,  # Activate RMSNorm
            )
            if res is None:
                res = hidden_states
            return normed_hidden_states, res


if SYSTEM == "cuda":
    import rotary_emb


class PositionRotaryEmbedding(nn.Module):
    def __init__(self, inv_freq, scaling_factor=None):
        super().__init__()
        self.inv_freq = inv_freq
        self._seq_len_cached = 0
        self._cos_cached = None
        self._sin_cached = None
        self.scaling_factor = scaling_factor

    def forward(self, query, key, cos, sin):
        if SYSTEM == "cuda":
            rotary_dim = cos.shape[-1]
            q1 = query[..., :rotary_dim]
            q2 = query[..., rotary_dim: 2 * rotary_dim]
            rotary_emb.apply_rotary(q1, q2, cos, sin, q1, q2, False)
            k1 = key[..., :rotary_dim]
            k2 = key[..., rotary_dim: 2 * rotary_dim]
            rotary_emb.apply_rotary(k1, k2, cos, sin, k1, k2, False)
        else:
            rotary_dim = cos.shape[-1]
            q1, q2 = query[..., :rotary_dim], query[..., rotary_dim: 2 * rotary_dim]
            k1, k2 = key[..., :rotary_dim], key[..., rotary_dim: 2 * rotary_dim]
            query[..., : 2 * rotary_dim] = torch.cat((q1 * cos - q2 * sin, q1 * sin + q2 * cos), dim=-1)
            key[..., : 2 * rotary_dim] = torch.cat((k1 * cos - k2 * sin, k1 * sin + k2 * cos), dim=-1)

    def _update_cos_sin_cache(self, dtype, device, seqlen):
        if seqlen > self._seq_len_cached or self._cos_cached.device != device or self._cos_cached.dtype != dtype:
            self._seq_len_cached = seqlen
            t = torch.arange(seqlen, device=device, dtype=self.inv_freq.dtype)
            if self.scaling_factor is not None:
                t /= self.scaling_factor
            freqs = torch.outer(t, self.inv_freq.to(device=t.device))
            self._cos_cached = torch.cos(freqs).to(dtype)
            self._sin_cached = torch.sin(freqs).to(dtype)

    def get_cos_sin(self, position_ids, max_s, dtype):
        self._update_cos_sin_cache(dtype, position_ids.device, max_s)
        cos = torch.index_select(self._cos_cached, 0, position_ids)
        sin = torch.index_select(self._sin_cached, 0, position_ids)
        return cos.unsqueeze(1), sin.unsqueeze(1)
