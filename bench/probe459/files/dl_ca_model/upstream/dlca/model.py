"""Differentiable Logic Cellular Automata.

The update rule of every cell is a small network of learnable logic gates:

  perception:  for each of ``n_kernels`` kernels, a logic circuit reading the
               binary 3x3 neighbourhood (9 bits) of the cell -> 1 bit
  update:      a deeper logic circuit reading [own state bits, perception bits]
               -> new state bits

During training the gates are relaxed to real-valued probabilistic logic
(difflogic), at test time the argmax gate is used and the CA is exactly binary.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from difflogic import LogicLayer, GroupSum


def _logic_stack(in_dim, widths, out_dim, device, implementation, connections="unique"):
    layers = []
    d = in_dim
    for wdt in widths:
        layers.append(LogicLayer(d, wdt, device=device, implementation=implementation, connections=connections))
        d = wdt
    layers.append(LogicLayer(d, out_dim, device=device, implementation=implementation, connections=connections))
    return nn.Sequential(*layers)


class DiffLogicCA(nn.Module):
    def __init__(
        self,
        n_channels=1,
        n_kernels=16,
        perception_widths=(8, 4, 2),
        update_widths=(128, 64, 32, 16, 8),
        device="cuda",
        implementation="cuda",
    ):
        super().__init__()
        self.n_channels = n_channels
        self.n_kernels = n_kernels
        self.device = device
        # one small circuit per perception kernel; each maps 9 neighbour bits to 1 bit
        self.perception = nn.ModuleList(
            [
                _logic_stack(9 * n_channels, perception_widths, 2, device, implementation)
                for _ in range(n_kernels)
            ]
        )
        self.perception_out = GroupSum(1, tau=2.0)
        self.update = _logic_stack(
            n_channels + n_kernels, update_widths, 2 * n_channels, device, implementation
        )
        self.update_out = GroupSum(n_channels, tau=2.0)

    def neighbourhoods(self, x):
        """x [B, C, H, W] -> [B*H*W, C*9]"""
        b, c, h, w = x.shape
        xp = F.pad(x, (1, 1, 1, 1), mode="circular")
        patches = F.unfold(xp, kernel_size=3)  # [B, C*9, H*W]
        return patches.transpose(1, 2).reshape(b * h * w, c * 9)

    def step(self, x):
        b, c, h, w = x.shape
        nb = self.neighbourhoods(x)
        percepts = [self.perception_out(circuit(nb)) for circuit in self.perception]
        p = torch.cat(percepts, dim=-1)  # [BHW, n_kernels]
        own = x.permute(0, 2, 3, 1).reshape(b * h * w, c)
        y = self.update(torch.cat([own, p], dim=-1))
        y = self.update_out(y)
        return y.reshape(b, h, w, c).permute(0, 3, 1, 2).clamp(0.0, 1.0)

    def forward(self, x, steps=1):
        for _ in range(steps):
            x = self.step(x)
        return x

    @torch.no_grad()
    def discretize(self):
        """Switch to hard gates (argmax) for exact binary evaluation."""
        self.eval()
        return self

    def gate_histogram(self):
        counts = torch.zeros(16, dtype=torch.long)
        for m in self.modules():
            if isinstance(m, LogicLayer):
                counts += torch.bincount(m.weights.argmax(-1).cpu(), minlength=16)
        return counts


class BinaryCA:
    """Exact binary execution of a trained (discretised) DiffLogicCA.

    Extracts the argmax gate of every neuron and evaluates the circuit with
    boolean tensor ops, so the result can be compared bit-for-bit with the
    reference rule and exported as a lookup table."""

    OPS = {
        0: lambda a, b: torch.zeros_like(a),
        1: lambda a, b: a & b,
        2: lambda a, b: a & ~b,
        3: lambda a, b: a,
        4: lambda a, b: ~a & b,
        5: lambda a, b: b,
        6: lambda a, b: a ^ b,
        7: lambda a, b: a | b,
        8: lambda a, b: ~(a | b),
        9: lambda a, b: ~(a ^ b),
        10: lambda a, b: ~b,
        11: lambda a, b: a | ~b,
        12: lambda a, b: ~a,
        13: lambda a, b: ~a | b,
        14: lambda a, b: ~(a & b),
        15: lambda a, b: torch.ones_like(a),
    }

    def __init__(self, model):
        self.model = model

    @staticmethod
    def _run_stack(stack, x):
        for layer in stack:
            gates = layer.weights.argmax(-1).tolist()
            ia, ib = layer.indices
            a, b = x[..., ia], x[..., ib]
            outs = [BinaryCA.OPS[g](a[..., j], b[..., j]) for j, g in enumerate(gates)]
            x = torch.stack(outs, dim=-1)
        return x

    @torch.no_grad()
    def step(self, x):
        m = self.model
        bsz, c, h, w = x.shape
        nb = m.neighbourhoods(x.float()).bool()
        percepts = [self._run_stack(circuit, nb).sum(-1, keepdim=True) > 0 for circuit in m.perception]
        p = torch.cat(percepts, dim=-1)
        own = x.bool().permute(0, 2, 3, 1).reshape(bsz * h * w, c)
        y = self._run_stack(m.update, torch.cat([own, p], dim=-1))
        y = y.reshape(bsz * h * w, c, -1).sum(-1) > (y.shape[-1] // (2 * c))
        return y.reshape(bsz, h, w, c).permute(0, 3, 1, 2).float()
