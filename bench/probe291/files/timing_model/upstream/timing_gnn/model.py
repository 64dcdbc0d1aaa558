"""Timing-engine-inspired GNN for pre-routing slack prediction.

Pins are nodes. Two edge sets:
  * net edges   (driver pin -> sink pins), carry dx/dy features
  * cell arcs   (cell input pin -> cell output pin), carry LUT features
Arrival times are propagated level by level over cell arcs, mimicking the
max-plus propagation of a static timing analyser (cf. TimingGCN, DAC'22).

Aggregations use torch_scatter; the level-wise propagation optionally uses a
fused CUDA kernel from csrc/ (see setup.py), with a pure PyTorch fallback.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch_scatter import scatter_add, scatter_mean, scatter_max

try:
    import timing_prop_cuda  # built by `python setup.py build_ext --inplace`
    HAS_PROP_KERNEL = True
except ImportError:
    timing_prop_cuda = None
    HAS_PROP_KERNEL = False


def mlp(sizes, act=nn.LeakyReLU, last_act=False):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2 or last_act:
            layers.append(act(0.2) if act is nn.LeakyReLU else act())
    return nn.Sequential(*layers)


class NetConv(nn.Module):
    """Driver <-> sink message passing inside each net."""

    def __init__(self, in_nf, in_ef, out_nf, hidden=64):
        super().__init__()
        self.msg_d2s = mlp([in_nf * 2 + in_ef, hidden, hidden, out_nf])
        self.msg_s2d = mlp([in_nf * 2 + in_ef, hidden, hidden, 1 + out_nf])
        self.out_nf = out_nf

    def forward(self, x, net_src, net_dst, net_ef, is_driver):
        # driver -> sinks
        m = self.msg_d2s(torch.cat([x[net_src], x[net_dst], net_ef], dim=1))
        h_sink = scatter_add(m, net_dst, dim=0, dim_size=x.size(0))
        # sinks -> driver, attention-like gating then sum and max pooling
        m2 = self.msg_s2d(torch.cat([x[net_dst], x[net_src], net_ef], dim=1))
        gate = torch.sigmoid(m2[:, :1])
        val = m2[:, 1:] * gate
        h_sum = scatter_add(val, net_src, dim=0, dim_size=x.size(0))
        h_max = scatter_max(val, net_src, dim=0, dim_size=x.size(0))[0]
        h_drv = 0.5 * (h_sum + h_max)
        return torch.where(is_driver.unsqueeze(1), h_drv, h_sink)


class CellArcProp(nn.Module):
    """Level-by-level arrival-time propagation over cell arcs."""

    def __init__(self, nf, ef, hidden=64, lut_dim=8):
        super().__init__()
        self.arc_mlp = mlp([nf * 2 + ef, hidden, hidden, nf])
        self.lut_q = nn.Linear(nf, lut_dim)
        self.lut_k = nn.Linear(ef, lut_dim)
        self.update = nn.GRUCell(nf, nf)

    def propagate_level(self, h, src, dst, ef):
        q = self.lut_q(h[src])
        k = self.lut_k(ef)
        att = (q * k).sum(-1, keepdim=True) / math.sqrt(q.size(-1))
        msg = self.arc_mlp(torch.cat([h[src], h[dst], ef], dim=1)) * torch.sigmoid(att)
        # max-plus semantics of STA: the latest arriving input dominates
        agg, _ = scatter_max(msg, dst, dim=0, dim_size=h.size(0))
        return agg

    def forward(self, h, arc_src, arc_dst, arc_ef, level_ptr):
        """level_ptr[i]:level_ptr[i+1] slices the arcs ending at level i+1 (arcs sorted by level)."""
        if HAS_PROP_KERNEL and h.is_cuda and not self.training:
            # inference fast path: one fused kernel launch for all levels
            return timing_prop_cuda.forward(h.contiguous(), arc_src, arc_dst, arc_ef.contiguous(),
                                            level_ptr, self.arc_mlp[0].weight, self.arc_mlp[0].bias)
        num_levels = level_ptr.numel() - 1
        level_ptr_host = level_ptr.tolist()
        for lv in range(num_levels):
            s, e = level_ptr_host[lv], level_ptr_host[lv + 1]
            if s == e:
                continue
            src, dst, ef = arc_src[s:e], arc_dst[s:e], arc_ef[s:e]
            agg = self.propagate_level(h, src, dst, ef)
            touched = torch.unique(dst)
            h = h.clone()
            h[touched] = self.update(agg[touched], h[touched])
        return h


class TimingGNN(nn.Module):
    def __init__(self, in_nf=10, net_ef=2, arc_ef=8, hidden=64, out_dim=4):
        super().__init__()
        self.inp = mlp([in_nf, hidden, hidden], last_act=True)
        self.net1 = NetConv(hidden, net_ef, hidden)
        self.net2 = NetConv(hidden, net_ef, hidden)
        self.prop = CellArcProp(hidden, arc_ef, hidden)
        self.head_at = mlp([hidden, hidden, out_dim])      # arrival time rise/fall early/late
        self.head_slew = mlp([hidden, hidden, out_dim])

    def forward(self, g):
        x = self.inp(g["pin_feat"])
        x = x + self.net1(x, g["net_src"], g["net_dst"], g["net_feat"], g["is_driver"])
        x = x + self.net2(x, g["net_src"], g["net_dst"], g["net_feat"], g["is_driver"])
        h = self.prop(x, g["arc_src"], g["arc_dst"], g["arc_feat"], g["arc_level_ptr"])
        return self.head_at(h), self.head_slew(h)


def endpoint_slack(at_pred, required, endpoint_idx):
    """Late slack at timing endpoints (late rise/fall are columns 2, 3)."""
    at_late = at_pred[endpoint_idx][:, 2:].max(dim=1)[0]
    return required - at_late


def design_wns_tns(slack, design_id, num_designs):
    neg = slack.clamp(max=0.0)
    tns = scatter_add(neg, design_id, dim=0, dim_size=num_designs)
    wns = -scatter_max(-slack, design_id, dim=0, dim_size=num_designs)[0]
    avg = scatter_mean(slack, design_id, dim=0, dim_size=num_designs)
    return wns, tns, avg
