import torch
import torch.nn as nn
from einops import rearrange

from igfold.utils.general import exists


class TriangleGraphAttention(nn.Module):
    """
    Graph attention restricted to triangles of the residue graph: edge (i, j) attends over
    all k using the (i, k) or (k, j) edges, in the spirit of the triangle updates of AlphaFold2.
    """

    def __init__(self, dim, heads=4, dim_head=32, orientation="out", dropout=0.0):
        super().__init__()
        assert orientation in ("out", "in")
        inner_dim = heads * dim_head

        self.heads = heads
        self.scale = dim_head ** -0.5
        self.orientation = orientation

        self.norm = nn.LayerNorm(dim)
        self.to_qkv = nn.Linear(dim, inner_dim * 3, bias=False)
        self.to_bias = nn.Linear(dim, heads, bias=False)
        self.gate = nn.Linear(dim, inner_dim)
        self.to_out = nn.Linear(inner_dim, dim)
        self.dropout = nn.Dropout(dropout)

        nn.init.zeros_(self.gate.weight)
        nn.init.ones_(self.gate.bias)

    def forward(self, edges, mask=None):
        if self.orientation == "in":
            edges = edges.transpose(1, 2)

        x = self.norm(edges)
        b, i, j, _ = x.shape
        h = self.heads

        q, k, v = self.to_qkv(x).chunk(3, dim=-1)
        q, k, v = map(lambda t: rearrange(t, "b i j (h d) -> b h i j d", h=h), (q, k, v))

        bias = rearrange(self.to_bias(x), "b i j h -> b h () i j")

        # (b, h, i, j, k): edge (i, j) attends to edges (i, k)
        logits = torch.einsum("b h i j d, b h i k d -> b h i j k", q * self.scale, k)
        logits = logits + bias

        if exists(mask):
            pair_mask = mask[:, None, :] & mask[:, :, None]
            logits = logits.masked_fill(~pair_mask[:, None, :, None, :], -torch.finfo(logits.dtype).max)

        attn = logits.softmax(dim=-1)
        attn = self.dropout(attn)

        out = torch.einsum("b h i j k, b h i k d -> b h i j d", attn, v)
        out = rearrange(out, "b h i j d -> b i j (h d)")
        out = out * self.gate(x).sigmoid()
        out = self.to_out(out)

        if self.orientation == "in":
            out = out.transpose(1, 2)

        return out


class TriangleMultiplicativeModule(nn.Module):
    def __init__(self, dim, hidden_dim=None, mix="ingoing"):
        super().__init__()
        assert mix in ("ingoing", "outgoing")
        hidden_dim = hidden_dim or dim

        self.norm = nn.LayerNorm(dim)
        self.left_proj = nn.Linear(dim, hidden_dim)
        self.right_proj = nn.Linear(dim, hidden_dim)
        self.left_gate = nn.Linear(dim, hidden_dim)
        self.right_gate = nn.Linear(dim, hidden_dim)
        self.out_gate = nn.Linear(dim, hidden_dim)

        for gate in (self.left_gate, self.right_gate, self.out_gate):
            nn.init.constant_(gate.weight, 0.)
            nn.init.constant_(gate.bias, 1.)

        if mix == "outgoing":
            self.mix_einsum_eq = "... i k d, ... j k d -> ... i j d"
        else:
            self.mix_einsum_eq = "... k j d, ... k i d -> ... i j d"

        self.to_out_norm = nn.LayerNorm(hidden_dim)
        self.to_out = nn.Linear(hidden_dim, dim)

    def forward(self, x, mask=None):
        assert x.shape[1] == x.shape[2], "feature map must be symmetrical"
        if exists(mask):
            mask = rearrange(mask, "b i j -> b i j ()")

        x = self.norm(x)

        left = self.left_proj(x)
        right = self.right_proj(x)

        if exists(mask):
            left = left * mask
            right = right * mask

        left = left * self.left_gate(x).sigmoid()
        right = right * self.right_gate(x).sigmoid()
        out_gate = self.out_gate(x).sigmoid()

        out = torch.einsum(self.mix_einsum_eq, left, right)

        out = self.to_out_norm(out)
        out = out * out_gate
        return self.to_out(out)


class TriangleGraphTransformerLayer(nn.Module):
    def __init__(self, dim, edge_dim, tri_dim_hidden, gt_heads, gt_dim_head):
        super().__init__()
        self.tri_out = TriangleMultiplicativeModule(edge_dim, tri_dim_hidden, mix="outgoing")
        self.tri_in = TriangleMultiplicativeModule(edge_dim, tri_dim_hidden, mix="ingoing")
        self.tri_attn_start = TriangleGraphAttention(edge_dim, heads=gt_heads, dim_head=gt_dim_head, orientation="out")
        self.tri_attn_end = TriangleGraphAttention(edge_dim, heads=gt_heads, dim_head=gt_dim_head, orientation="in")
        self.node_update = nn.Sequential(
            nn.LayerNorm(dim + edge_dim),
            nn.Linear(dim + edge_dim, dim),
            nn.ReLU(),
            nn.Linear(dim, dim),
        )

    def forward(self, nodes, edges, mask=None):
        pair_mask = None
        if exists(mask):
            pair_mask = mask[:, :, None] & mask[:, None, :]

        edges = edges + self.tri_out(edges, mask=pair_mask)
        edges = edges + self.tri_in(edges, mask=pair_mask)
        edges = edges + self.tri_attn_start(edges, mask=mask)
        edges = edges + self.tri_attn_end(edges, mask=mask)

        agg = edges.mean(dim=2)
        nodes = nodes + self.node_update(torch.cat([nodes, agg], dim=-1))
        return nodes, edges


class TriangleGraphTransformer(nn.Module):
    def __init__(self, dim, edge_dim, depth, tri_dim_hidden, gt_depth, gt_heads, gt_dim_head):
        super().__init__()
        self.layers = nn.ModuleList([
            TriangleGraphTransformerLayer(dim, edge_dim, tri_dim_hidden, gt_heads, gt_dim_head)
            for _ in range(depth)
        ])

    def forward(self, nodes, edges, mask=None):
        for layer in self.layers:
            nodes, edges = layer(nodes, edges, mask=mask)
        return nodes, edges
