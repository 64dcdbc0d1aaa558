"""ViTCA: Vision Transformer Cellular Automata (attention-based NCA).

Every cell holds a token of size ``embed_dim``. The first ``in_chans`` channels
are the (noisy / masked) input pixels, the next ``out_chans`` the output
pixels, the remaining channels hidden state. One CA step applies a
transformer encoder block in which each cell attends only to its
``localize_attn_size`` x ``localize_attn_size`` Moore neighbourhood, followed by
a per-cell MLP, and adds the result to the hidden part of the state.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint


class LocalizedAttention(nn.Module):
    def __init__(self, dim, heads=4, dim_head=64, neighbourhood=3, dropout=0.0, use_sdpa=True):
        super().__init__()
        inner_dim = dim_head * heads
        self.heads = heads
        self.dim_head = dim_head
        self.scale = dim_head ** -0.5
        self.neighbourhood = neighbourhood
        self.use_sdpa = use_sdpa
        self.to_q = nn.Linear(dim, inner_dim, bias=False)
        self.to_kv = nn.Linear(dim, inner_dim * 2, bias=False)
        self.to_out = nn.Sequential(nn.Linear(inner_dim, dim), nn.Dropout(dropout))
        self.attn_drop = dropout

    def gather_neighbours(self, t, h, w):
        """t: [B, H*W, C] -> [B, H*W, k*k, C] with circular boundary."""
        b, n, c = t.shape
        k = self.neighbourhood
        p = k // 2
        grid = t.transpose(1, 2).reshape(b, c, h, w)
        grid = F.pad(grid, (p, p, p, p), mode="circular")
        patches = F.unfold(grid, kernel_size=k)  # [B, C*k*k, H*W]
        patches = patches.reshape(b, c, k * k, h * w).permute(0, 3, 2, 1)
        return patches

    def forward(self, x, h, w):
        b, n, _ = x.shape
        q = self.to_q(x)
        k, v = self.to_kv(x).chunk(2, dim=-1)
        k = self.gather_neighbours(k, h, w)
        v = self.gather_neighbours(v, h, w)

        # [B*N, heads, 1, d] queries against [B*N, heads, k*k, d] keys/values
        q = q.reshape(b * n, 1, self.heads, self.dim_head).transpose(1, 2)
        k = k.reshape(b * n, -1, self.heads, self.dim_head).transpose(1, 2)
        v = v.reshape(b * n, -1, self.heads, self.dim_head).transpose(1, 2)

        if x.is_cuda and self.use_sdpa:
            # flash kernels do not support the tiny head count we use for
            # small models, so only allow the math / mem-efficient backends
            with torch.backends.cuda.sdp_kernel(enable_flash=False, enable_math=True, enable_mem_efficient=True):
                out = F.scaled_dot_product_attention(
                    q, k, v, dropout_p=self.attn_drop if self.training else 0.0
                )
        else:
            attn = torch.einsum("bhid,bhjd->bhij", q, k) * self.scale
            attn = attn.softmax(dim=-1)
            if self.training and self.attn_drop > 0:
                attn = F.dropout(attn, p=self.attn_drop)
            out = torch.einsum("bhij,bhjd->bhid", attn, v)

        out = out.transpose(1, 2).reshape(b, n, self.heads * self.dim_head)
        return self.to_out(out)


class FeedForward(nn.Module):
    def __init__(self, dim, hidden_dim, dropout=0.0):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(dim, hidden_dim),
            nn.GELU(),
            nn.Dropout(dropout),
            nn.Linear(hidden_dim, dim),
            nn.Dropout(dropout),
        )

    def forward(self, x):
        return self.net(x)


class TransformerBlock(nn.Module):
    def __init__(self, dim, heads, dim_head, mlp_dim, neighbourhood, dropout=0.0, use_sdpa=True):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = LocalizedAttention(dim, heads, dim_head, neighbourhood, dropout, use_sdpa)
        self.norm2 = nn.LayerNorm(dim)
        self.ff = FeedForward(dim, mlp_dim, dropout)

    def forward(self, x, h, w):
        x = x + self.attn(self.norm1(x), h, w)
        x = x + self.ff(self.norm2(x))
        return x


class ViTCA(nn.Module):
    def __init__(
        self,
        patch_size=1,
        depth=1,
        heads=4,
        mlp_dim=64,
        dropout=0.0,
        cell_in_chans=3,
        cell_out_chans=3,
        cell_hidden_chans=32,
        embed_dim=128,
        embed_dropout=0.0,
        localize_attn_size=3,
        pos_encoding_max_freq=5,
        cell_init="constant",
        use_sdpa=True,
    ):
        super().__init__()
        self.patch_size = patch_size
        self.cell_in_chans = cell_in_chans
        self.cell_out_chans = cell_out_chans
        self.cell_hidden_chans = cell_hidden_chans
        self.cell_update_chans = cell_out_chans + cell_hidden_chans
        self.cell_chans = cell_in_chans + self.cell_update_chans
        self.pos_encoding_max_freq = pos_encoding_max_freq
        self.pe_chans = 4 * pos_encoding_max_freq
        self.cell_init = cell_init

        self.embed = nn.Linear(self.cell_chans + self.pe_chans, embed_dim)
        self.embed_drop = nn.Dropout(embed_dropout)
        self.blocks = nn.ModuleList(
            [
                TransformerBlock(embed_dim, heads, embed_dim // heads, mlp_dim, localize_attn_size, dropout, use_sdpa)
                for _ in range(depth)
            ]
        )
        self.head = nn.Sequential(nn.LayerNorm(embed_dim), nn.Linear(embed_dim, self.cell_update_chans))
        nn.init.zeros_(self.head[1].weight)
        nn.init.zeros_(self.head[1].bias)

    def positional_encoding(self, h, w, device, dtype):
        ys = torch.linspace(-1, 1, h, device=device, dtype=dtype)
        xs = torch.linspace(-1, 1, w, device=device, dtype=dtype)
        yy, xx = torch.meshgrid(ys, xs, indexing="ij")
        freqs = 2.0 ** torch.arange(self.pos_encoding_max_freq, device=device, dtype=dtype) * math.pi
        pe = [torch.sin(yy[..., None] * freqs), torch.cos(yy[..., None] * freqs),
              torch.sin(xx[..., None] * freqs), torch.cos(xx[..., None] * freqs)]
        return torch.cat(pe, dim=-1).permute(2, 0, 1)  # [pe_chans, H, W]

    def seed(self, x):
        """x: masked input image [B, C_in, H, W] -> initial cell grid."""
        b, _, h, w = x.shape
        if self.cell_init == "constant":
            rest = torch.full((b, self.cell_update_chans, h, w), 0.5, device=x.device, dtype=x.dtype)
        else:
            rest = torch.rand((b, self.cell_update_chans, h, w), device=x.device, dtype=x.dtype)
        return torch.cat([x, rest], dim=1)

    def get_output(self, cells):
        return cells[:, self.cell_in_chans : self.cell_in_chans + self.cell_out_chans]

    def step(self, cells, update_rate=0.5):
        b, c, h, w = cells.shape
        pe = self.positional_encoding(h, w, cells.device, cells.dtype).unsqueeze(0).expand(b, -1, -1, -1)
        tokens = torch.cat([cells, pe], dim=1).flatten(2).transpose(1, 2)  # [B, HW, C]
        x = self.embed_drop(self.embed(tokens))
        for blk in self.blocks:
            x = blk(x, h, w)
        update = self.head(x).transpose(1, 2).reshape(b, self.cell_update_chans, h, w)
        if update_rate < 1.0:
            mask = (torch.rand(b, 1, h, w, device=cells.device) < update_rate).to(update.dtype)
            update = update * mask
        inp = cells[:, : self.cell_in_chans]
        hidden = cells[:, self.cell_in_chans :] + update
        return torch.cat([inp, hidden], dim=1)

    def forward(self, cells, step_n=1, update_rate=0.5, chkpt_segments=1):
        if chkpt_segments > 1 and self.training:
            seg = max(step_n // chkpt_segments, 1)
            for i in range(0, step_n, seg):
                n = min(seg, step_n - i)
                cells = torch.utils.checkpoint.checkpoint(
                    self._run, cells, n, update_rate, use_reentrant=False
                )
            return cells
        return self._run(cells, step_n, update_rate)

    def _run(self, cells, step_n, update_rate):
        for _ in range(step_n):
            cells = self.step(cells, update_rate)
        return cells


class UNetCA(nn.Module):
    """Convolutional baseline from the paper: a tiny U-Net applied as the CA
    update rule (same cell layout as ViTCA, same seeding and output slicing)."""

    def __init__(self, cell_in_chans=3, cell_out_chans=3, cell_hidden_chans=32, base=32, cell_init="constant"):
        super().__init__()
        self.cell_in_chans = cell_in_chans
        self.cell_out_chans = cell_out_chans
        self.cell_hidden_chans = cell_hidden_chans
        self.cell_update_chans = cell_out_chans + cell_hidden_chans
        self.cell_chans = cell_in_chans + self.cell_update_chans
        self.cell_init = cell_init

        def block(cin, cout):
            return nn.Sequential(
                nn.Conv2d(cin, cout, 3, padding=1, padding_mode="circular"),
                nn.GroupNorm(8, cout),
                nn.GELU(),
                nn.Conv2d(cout, cout, 3, padding=1, padding_mode="circular"),
                nn.GELU(),
            )

        self.enc1 = block(self.cell_chans, base)
        self.enc2 = block(base, base * 2)
        self.dec1 = block(base * 3, base)
        self.out = nn.Conv2d(base, self.cell_update_chans, 1)
        nn.init.zeros_(self.out.weight)
        nn.init.zeros_(self.out.bias)

    seed = ViTCA.seed
    get_output = ViTCA.get_output

    def step(self, cells, update_rate=0.5):
        e1 = self.enc1(cells)
        e2 = self.enc2(F.avg_pool2d(e1, 2))
        d1 = self.dec1(torch.cat([e1, F.interpolate(e2, scale_factor=2, mode="nearest")], dim=1))
        update = self.out(d1)
        if update_rate < 1.0:
            b, _, h, w = cells.shape
            mask = (torch.rand(b, 1, h, w, device=cells.device) < update_rate).to(update.dtype)
            update = update * mask
        return torch.cat([cells[:, : self.cell_in_chans], cells[:, self.cell_in_chans :] + update], dim=1)

    def forward(self, cells, step_n=1, update_rate=0.5, chkpt_segments=1):
        for _ in range(step_n):
            cells = self.step(cells, update_rate)
        return cells


def count_parameters(model):
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
