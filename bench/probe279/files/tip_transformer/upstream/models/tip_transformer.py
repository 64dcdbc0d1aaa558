"""
Causal transformer over sparse-IMU windows (TIP-style inertial poser).

Input per frame: 6 IMUs x (9 rotation + 3 acceleration) = 72 features.
Outputs per frame: SMPL pose in 6D (24 x 6), root velocity (3), foot contact logits (2).

Attention backends, in order of preference:
  * xformers memory_efficient_attention (if installed and `attn_impl='xformers'`)
  * PyTorch 2 scaled_dot_product_attention (flash / mem-efficient kernels on CUDA)
  * plain math attention (for export / debugging)
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import xformers.ops as xops
    HAS_XFORMERS = True
except ImportError:
    xops = None
    HAS_XFORMERS = False

HAS_SDPA = hasattr(F, 'scaled_dot_product_attention')


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, n_heads, dropout=0.0, attn_impl='sdpa'):
        super().__init__()
        assert dim % n_heads == 0
        self.n_heads = n_heads
        self.head_dim = dim // n_heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.dropout = dropout
        self.attn_impl = attn_impl
        if attn_impl == 'xformers' and not HAS_XFORMERS:
            print('[TIPTransformer] xformers not installed, using sdpa')
            self.attn_impl = 'sdpa'

    def forward(self, x, kv_cache=None):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q = q.view(B, T, self.n_heads, self.head_dim)
        k = k.view(B, T, self.n_heads, self.head_dim)
        v = v.view(B, T, self.n_heads, self.head_dim)

        if kv_cache is not None:
            # streaming inference: append to the cache, attend to everything cached (no mask needed)
            if kv_cache.get('k') is not None:
                k = torch.cat([kv_cache['k'], k], dim=1)[:, -kv_cache['max_len']:]
                v = torch.cat([kv_cache['v'], v], dim=1)[:, -kv_cache['max_len']:]
            kv_cache['k'], kv_cache['v'] = k, v
            causal = False
        else:
            causal = True
        p = self.dropout if self.training else 0.0

        if self.attn_impl == 'xformers':
            bias = xops.LowerTriangularMask() if causal else None
            y = xops.memory_efficient_attention(q, k, v, attn_bias=bias, p=p)          # [B, T, H, D]
        elif self.attn_impl == 'sdpa' and HAS_SDPA:
            q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)         # [B, H, T, D]
            with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True):
                y = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=causal and T > 1)
            y = y.transpose(1, 2)
        else:
            q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) / math.sqrt(self.head_dim)
            if causal:
                Tk = k.shape[2]
                mask = torch.ones(T, Tk, dtype=torch.bool, device=x.device).tril(diagonal=Tk - T)
                att = att.masked_fill(~mask, float('-inf'))
            att = F.dropout(att.softmax(dim=-1), p=p, training=self.training)
            y = (att @ v).transpose(1, 2)
        return self.proj(y.reshape(B, -1, C)[:, -T:])


class Block(nn.Module):
    def __init__(self, dim, n_heads, mlp_ratio=4.0, dropout=0.1, attn_impl='sdpa'):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = CausalSelfAttention(dim, n_heads, dropout, attn_impl)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, int(dim * mlp_ratio)), nn.GELU(approximate='tanh'),
                                 nn.Linear(int(dim * mlp_ratio), dim), nn.Dropout(dropout))

    def forward(self, x, kv_cache=None):
        x = x + self.attn(self.ln1(x), kv_cache)
        x = x + self.mlp(self.ln2(x))
        return x


class TIPTransformer(nn.Module):
    def __init__(self, n_imu=6, dim=256, depth=6, n_heads=8, max_len=256, dropout=0.1, attn_impl='sdpa'):
        super().__init__()
        self.max_len = max_len
        self.inp = nn.Linear(n_imu * 12, dim)
        self.pos_emb = nn.Parameter(torch.zeros(1, max_len, dim))
        self.blocks = nn.ModuleList([Block(dim, n_heads, dropout=dropout, attn_impl=attn_impl) for _ in range(depth)])
        self.ln_f = nn.LayerNorm(dim)
        self.head_pose = nn.Linear(dim, 24 * 6)
        self.head_vel = nn.Linear(dim, 3)
        self.head_contact = nn.Linear(dim, 2)
        nn.init.trunc_normal_(self.pos_emb, std=0.02)
        self.apply(self._init)
        self._cache = None

    @staticmethod
    def _init(m):
        if isinstance(m, nn.Linear):
            nn.init.trunc_normal_(m.weight, std=0.02)
            if m.bias is not None:
                nn.init.zeros_(m.bias)

    def forward(self, imu):
        """
        :param imu: [B, T, 72] with T <= max_len
        """
        B, T, _ = imu.shape
        x = self.inp(imu) + self.pos_emb[:, :T]
        for blk in self.blocks:
            x = blk(x)
        x = self.ln_f(x)
        return {'pose6d': self.head_pose(x), 'root_vel': self.head_vel(x), 'contact': self.head_contact(x)}

    # ---------------------------------------------------------------- streaming (one frame at a time)
    def reset_stream(self):
        self._cache = [{'k': None, 'v': None, 'max_len': self.max_len} for _ in self.blocks]
        self._t = 0

    @torch.no_grad()
    def forward_online(self, imu_frame):
        """
        :param imu_frame: [B, 72] current frame
        """
        if self._cache is None:
            self.reset_stream()
        pos = min(self._t, self.max_len - 1)
        x = self.inp(imu_frame.unsqueeze(1)) + self.pos_emb[:, pos:pos + 1]
        for blk, cache in zip(self.blocks, self._cache):
            x = blk(x, cache)
        x = self.ln_f(x)[:, 0]
        self._t += 1
        return {'pose6d': self.head_pose(x), 'root_vel': self.head_vel(x), 'contact': self.head_contact(x)}


def load_for_inference(ckpt_path, cfg=None, device='cuda', half=True):
    """
    Build a TIPTransformer from a train_ddp.py checkpoint ('last.pt' or 'ema.pt') for the live demo.
    """
    ckpt = torch.load(ckpt_path, map_location='cpu')
    cfg = cfg or ckpt['cfg']
    model = TIPTransformer(**cfg['model'])
    state = {k.replace('_orig_mod.', '').replace('module.', ''): v for k, v in ckpt['model'].items()}
    missing, unexpected = model.load_state_dict(state, strict=False)
    if missing or unexpected:
        print('[TIPTransformer] missing %s, unexpected %s' % (missing, unexpected))
    model = model.to(device).eval()
    if half:
        model = model.half()
    model.reset_stream()
    return model


def benchmark(batch=64, T=240, iters=50):
    import time
    model = TIPTransformer().cuda().eval().half()
    x = torch.randn(batch, T, 72, device='cuda', dtype=torch.half)
    with torch.no_grad():
        for _ in range(5):
            model(x)
        torch.cuda.synchronize()
        t = time.time()
        for _ in range(iters):
            model(x)
        torch.cuda.current_stream().synchronize()
    print('%.2f ms / batch of %dx%d' % ((time.time() - t) / iters * 1000, batch, T))


if __name__ == '__main__':
    benchmark()
