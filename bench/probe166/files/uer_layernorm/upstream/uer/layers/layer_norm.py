import torch
import torch.nn as nn

try:
    # apex's fused kernel is noticeably faster than the python implementation on V100/A100.
    from apex.normalization.fused_layer_norm import FusedLayerNorm
    APEX_IS_AVAILABLE = True
except ImportError:
    APEX_IS_AVAILABLE = False


class LayerNorm(nn.Module):
    """
    Layer Normalization.
    https://arxiv.org/abs/1607.06450
    """
    def __init__(self, hidden_size, eps=1e-6):
        super(LayerNorm, self).__init__()
        self.eps = eps
        self.gamma = nn.Parameter(torch.ones(hidden_size))
        self.beta = nn.Parameter(torch.zeros(hidden_size))

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        std = x.std(-1, keepdim=True)
        hidden_states = self.gamma * (x-mean) / (std + self.eps)

        return hidden_states + self.beta


class FastLayerNorm(nn.Module):
    """
    LayerNorm backed by apex FusedLayerNorm when it is installed, torch.nn.LayerNorm otherwise.
    Parameter names (gamma / beta) are kept so that checkpoints stay compatible with LayerNorm above.
    """
    def __init__(self, hidden_size, eps=1e-6):
        super(FastLayerNorm, self).__init__()
        if APEX_IS_AVAILABLE:
            self.impl = FusedLayerNorm(hidden_size, eps=eps)
        else:
            self.impl = nn.LayerNorm(hidden_size, eps=eps)

    @property
    def gamma(self):
        return self.impl.weight

    @property
    def beta(self):
        return self.impl.bias

    def forward(self, x):
        return self.impl(x)


class T5LayerNorm(nn.Module):
    """
    Construct a layernorm module in the T5 style No bias and no subtraction of mean.
    """
    def __init__(self, hidden_size, eps=1e-6):
        super(T5LayerNorm, self).__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(hidden_size))

    def forward(self, x):
        # layer norm should always be calculated in float32
        variance = x.to(torch.float32).pow(2).mean(-1, keepdim=True)
        hidden_states = x * torch.rsqrt(variance + self.eps)

        return self.weight * hidden_states.type_as(self.weight)


class RMSNorm(torch.nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(hidden_size))

    def _norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

    def forward(self, x):
        output = self._norm(x.float()).type_as(x)
        return output * self.weight


str2layernorm = {"t5": T5LayerNorm, "rms": RMSNorm, "normal_torch": nn.LayerNorm,
                 "normal": LayerNorm, "fused": FastLayerNorm}
