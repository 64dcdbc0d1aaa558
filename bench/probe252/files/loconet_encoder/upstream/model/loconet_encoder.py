import math
import torch
import torch.nn as nn
import torch.nn.functional as F

from model.audioEncoder import audioEncoder
from model.visualEncoder import visualFrontend, visualConv1D, visualTCN
from model.attentionLayer import attentionLayer
from model.convLayer import ConvLayer
from torchvggish import vggish

# PyTorch >= 2.0: use the fused SDPA kernels for the speaker-speaker attention.
# On older versions (or on CPU) we fall back to the explicit softmax(QK^T)V path.
_HAS_SDPA = hasattr(F, "scaled_dot_product_attention")


class SpeakerAttention(nn.Module):
    """Inter-speaker attention used in the Long-term Intra-speaker Modeling (LIM) /
    Short-term Inter-speaker Modeling (SIM) blocks. Input is (B*S, T, C); attention
    is computed across the S speakers at every time step inside a window."""

    def __init__(self, d_model, nhead, dropout=0.1, window=7, use_flash=True):
        super(SpeakerAttention, self).__init__()
        assert d_model % nhead == 0
        self.nhead = nhead
        self.head_dim = d_model // nhead
        self.window = window
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.dropout = dropout
        self.use_flash = use_flash and _HAS_SDPA
        self.norm = nn.LayerNorm(d_model)

    def _explicit_attention(self, q, k, v, mask):
        attn = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        if mask is not None:
            attn = attn.masked_fill(mask, float("-inf"))
        attn = F.softmax(attn, dim=-1)
        attn = F.dropout(attn, p=self.dropout, training=self.training)
        return torch.matmul(attn, v)

    def forward(self, x, b, s, mask=None):
        # x: (b*s, t, c) -> (b*t, s, c), attention over speakers
        bs, t, c = x.shape
        residual = x
        x = x.view(b, s, t, c).permute(0, 2, 1, 3).reshape(b * t, s, c)
        qkv = self.qkv(x).view(b * t, s, 3, self.nhead, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        if self.use_flash and x.is_cuda:
            # flash kernels only accept fp16/bf16; under autocast this is already half
            with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=True):
                out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask,
                                                     dropout_p=self.dropout if self.training else 0.0)
        else:
            out = self._explicit_attention(q, k, v, mask)
        out = out.transpose(1, 2).reshape(b * t, s, c)
        out = self.proj(out)
        out = out.view(b, t, s, c).permute(0, 2, 1, 3).reshape(bs, t, c)
        return self.norm(out + residual)


class locoencoder(nn.Module):

    def __init__(self, cfg):
        super(locoencoder, self).__init__()
        self.cfg = cfg
        # Visual Temporal Encoder
        self.visualFrontend = visualFrontend(cfg)    # Visual Frontend
        self.visualTCN = visualTCN()    # Visual Temporal Network TCN
        self.visualConv1D = visualConv1D()    # Visual Temporal Network Conv1d

        urls = {
            'vggish':
                "https://github.com/harritaylor/torchvggish/releases/download/v0.1/vggish-10086976.pth"
        }
        self.audioEncoder = vggish.VGGish(urls, preprocess=False, postprocess=False)
        self.audio_pool = nn.AdaptiveAvgPool1d(1)

        # Audio-visual Cross Attention
        self.crossA2V = attentionLayer(d_model=128, nhead=8)
        self.crossV2A = attentionLayer(d_model=128, nhead=8)

        # Audio-visual Self Attention / context modelling
        num_layers = self.cfg.av_layers
        layers = nn.ModuleList()
        for i in range(num_layers):
            layers.append(ConvLayer(cfg))
            layers.append(SpeakerAttention(d_model=256, nhead=8, use_flash=cfg.MODEL.FLASH_ATTN))
        self.convAV = layers

    def forward_visual_frontend(self, x):

        B, T, W, H = x.shape
        x = x.view(B * T, 1, 1, W, H)
        x = (x / 255 - 0.4161) / 0.1688
        x = self.visualFrontend(x)
        x = x.view(B, T, 512)
        x = x.transpose(1, 2)
        x = self.visualTCN(x)
        x = self.visualConv1D(x)
        x = x.transpose(1, 2)
        return x

    def forward_audio_frontend(self, x):
        t = x.shape[-2]
        numFrames = t // 4
        pad = 8 - (t % 8)
        x = torch.nn.functional.pad(x, (0, 0, 0, pad), "constant")
        x = self.audioEncoder(x)

        b, c, t2, freq = x.shape
        x = x.view(b * c, t2, freq)
        x = self.audio_pool(x)
        x = x.view(b, c, t2)[:, :, :numFrames]
        x = x.permute(0, 2, 1)
        return x

    def forward_cross_attention(self, x1, x2):
        x1_c = self.crossA2V(src=x1, tar=x2, adjust=self.cfg.MODEL.ADJUST_ATTENTION)
        x2_c = self.crossV2A(src=x2, tar=x1, adjust=self.cfg.MODEL.ADJUST_ATTENTION)
        return x1_c, x2_c

    def forward_audio_visual_backend(self, x1, x2, b=1, s=1):
        x = torch.cat((x1, x2), 2)    # B*S, T, 2C
        for i, layer in enumerate(self.convAV):
            if i % 2 == 0:
                x, b, s = layer(x, b, s)
            else:
                x = layer(x, b, s)
        x = torch.reshape(x, (-1, 256))
        return x

    def forward_audio_backend(self, x):
        x = torch.reshape(x, (-1, 128))
        return x

    def forward_visual_backend(self, x):
        x = torch.reshape(x, (-1, 128))
        return x


def build_speaker_mask(masks, b, s, t, device=None):
    """masks: (b, s, t) 1 = real speaker, 0 = padded speaker slot.
    Returns a bool mask (b*t, 1, s, s) where True = do not attend."""
    device = device if device is not None else masks.device
    m = masks.to(device=device, dtype=torch.bool).permute(0, 2, 1).reshape(b * t, s)
    return ~(m[:, None, :, None] & m[:, None, None, :])


class LocalSpeakerConv(nn.Module):
    """Short-term inter-speaker modelling: a small 2D conv over (speaker, time)
    applied to the audio-visual embedding. Same as model/convLayer.py but without
    the yacs dependency, used by the ablation configs."""

    def __init__(self, d_model=256, kernel_t=7, kernel_s=3, dropout=0.1):
        super(LocalSpeakerConv, self).__init__()
        self.conv = nn.Conv2d(d_model, d_model, kernel_size=(kernel_s, kernel_t),
                              padding=(kernel_s // 2, kernel_t // 2), groups=8)
        self.bn = nn.BatchNorm2d(d_model)
        self.act = nn.GELU()
        self.ff = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Dropout(dropout),
                                nn.Linear(4 * d_model, d_model))
        self.norm = nn.LayerNorm(d_model)

    def forward(self, x, b, s):
        bs, t, c = x.shape
        y = x.view(b, s, t, c).permute(0, 3, 1, 2)          # b, c, s, t
        y = self.act(self.bn(self.conv(y)))
        y = y.permute(0, 2, 3, 1).reshape(bs, t, c)
        x = x + y
        x = self.norm(x + self.ff(x))
        return x, b, s


def count_parameters(module, trainable_only=True):
    return sum(p.numel() for p in module.parameters() if p.requires_grad or not trainable_only)
