"""Gate-points style equivariant message passing network (e3nn).

Adapted from the e3nn ``gate_points_2101`` example network and extended with
per-species embeddings, a Bessel radial basis and an energy/force head so it can
be trained as an interatomic potential.
"""
from typing import Dict, Optional, Union

import math

import torch
from torch import nn
from torch_cluster import radius_graph
from torch_scatter import scatter

from e3nn import o3
from e3nn.math import soft_one_hot_linspace
from e3nn.nn import FullyConnectedNet, Gate
from e3nn.util.jit import compile_mode


def tp_path_exists(irreps_in1, irreps_in2, ir_out) -> bool:
    irreps_in1 = o3.Irreps(irreps_in1).simplify()
    irreps_in2 = o3.Irreps(irreps_in2).simplify()
    ir_out = o3.Irrep(ir_out)

    for _, ir1 in irreps_in1:
        for _, ir2 in irreps_in2:
            if ir_out in ir1 * ir2:
                return True
    return False


class BesselBasis(nn.Module):
    def __init__(self, r_max: float, num_basis: int = 8, trainable: bool = True):
        super().__init__()
        self.r_max = float(r_max)
        self.prefactor = 2.0 / self.r_max
        bessel_weights = torch.linspace(1.0, num_basis, num_basis) * math.pi
        if trainable:
            self.bessel_weights = nn.Parameter(bessel_weights)
        else:
            self.register_buffer("bessel_weights", bessel_weights)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        numerator = torch.sin(self.bessel_weights * x.unsqueeze(-1) / self.r_max)
        return self.prefactor * (numerator / x.unsqueeze(-1))


def polynomial_cutoff(x: torch.Tensor, r_max: float, p: float = 6.0) -> torch.Tensor:
    x = x / r_max
    out = 1.0
    out = out - (((p + 1.0) * (p + 2.0) / 2.0) * torch.pow(x, p))
    out = out + (p * (p + 2.0) * torch.pow(x, p + 1.0))
    out = out - ((p * (p + 1.0) / 2) * torch.pow(x, p + 2.0))
    return out * (x < 1.0)


@compile_mode("script")
class Convolution(nn.Module):
    r"""equivariant convolution

    Parameters
    ----------
    irreps_in : `e3nn.o3.Irreps`
        representation of the input node features
    irreps_node_attr : `e3nn.o3.Irreps`
        representation of the node attributes
    irreps_edge_attr : `e3nn.o3.Irreps`
        representation of the edge attributes
    irreps_out : `e3nn.o3.Irreps` or None
        representation of the output node features
    number_of_basis : int
        number of basis on which the edge length are projected
    radial_layers : int
        number of hidden layers in the radial fully connected network
    radial_neurons : int
        number of neurons in the hidden layers of the radial fully connected network
    num_neighbors : float
        typical number of nodes convolved over
    """

    def __init__(
        self,
        irreps_in,
        irreps_node_attr,
        irreps_edge_attr,
        irreps_out,
        number_of_basis,
        radial_layers,
        radial_neurons,
        num_neighbors,
    ) -> None:
        super().__init__()
        self.irreps_in = o3.Irreps(irreps_in)
        self.irreps_node_attr = o3.Irreps(irreps_node_attr)
        self.irreps_edge_attr = o3.Irreps(irreps_edge_attr)
        self.irreps_out = o3.Irreps(irreps_out)
        self.num_neighbors = num_neighbors

        self.sc = o3.FullyConnectedTensorProduct(self.irreps_in, self.irreps_node_attr, self.irreps_out)

        self.lin1 = o3.FullyConnectedTensorProduct(self.irreps_in, self.irreps_node_attr, self.irreps_in)

        irreps_mid = []
        instructions = []
        for i, (mul, ir_in) in enumerate(self.irreps_in):
            for j, (_, ir_edge) in enumerate(self.irreps_edge_attr):
                for ir_out in ir_in * ir_edge:
                    if ir_out in self.irreps_out:
                        k = len(irreps_mid)
                        irreps_mid.append((mul, ir_out))
                        instructions.append((i, j, k, "uvu", True))
        irreps_mid = o3.Irreps(irreps_mid)
        irreps_mid, p, _ = irreps_mid.sort()

        instructions = [(i_1, i_2, p[i_out], mode, train) for i_1, i_2, i_out, mode, train in instructions]

        tp = o3.TensorProduct(
            self.irreps_in,
            self.irreps_edge_attr,
            irreps_mid,
            instructions,
            internal_weights=False,
            shared_weights=False,
        )
        self.fc = FullyConnectedNet([number_of_basis] + radial_layers * [radial_neurons] + [tp.weight_numel], torch.nn.functional.silu)
        self.tp = tp

        self.lin2 = o3.FullyConnectedTensorProduct(irreps_mid, self.irreps_node_attr, self.irreps_out)

    def forward(self, node_input, node_attr, edge_src, edge_dst, edge_attr, edge_length_embedded) -> torch.Tensor:
        weight = self.fc(edge_length_embedded)

        node_self_connection = self.sc(node_input, node_attr)
        node_features = self.lin1(node_input, node_attr)

        # the tensor product is numerically delicate; keep it in fp32 even under AMP
        with torch.autocast(device_type="cuda", enabled=False):
            edge_features = self.tp(node_features[edge_src].float(), edge_attr.float(), weight.float())
        node_features = scatter(edge_features, edge_dst, dim=0, dim_size=node_input.shape[0]).div(self.num_neighbors**0.5)

        node_conv_out = self.lin2(node_features, node_attr)
        node_angle = 0.1 * self.lin1.output_mask
        c_s, c_x = torch.cos(node_angle), torch.sin(node_angle)
        m = self.sc.output_mask
        c_s = (1 - m) + c_s * m
        c_x = c_x * m

        return c_s * node_self_connection + c_x * node_conv_out


class Compose(torch.nn.Module):
    def __init__(self, first, second) -> None:
        super().__init__()
        self.first = first
        self.second = second

    def forward(self, *input):
        x = self.first(*input)
        return self.second(x)


class GatePointsPotential(torch.nn.Module):
    """Energy model; forces come from autograd w.r.t. positions."""

    def __init__(
        self,
        num_species: int,
        irreps_hidden: str = "32x0e + 16x1o + 8x2e",
        lmax: int = 2,
        layers: int = 3,
        max_radius: float = 5.0,
        number_of_basis: int = 8,
        radial_layers: int = 1,
        radial_neurons: int = 64,
        num_neighbors: float = 20.0,
        max_num_neighbors: int = 64,
    ) -> None:
        super().__init__()
        self.max_radius = max_radius
        self.number_of_basis = number_of_basis
        self.num_neighbors = num_neighbors
        self.max_num_neighbors = max_num_neighbors
        self.num_species = num_species

        self.irreps_in = o3.Irreps(f"{num_species}x0e")
        self.irreps_hidden = o3.Irreps(irreps_hidden)
        self.irreps_node_attr = o3.Irreps("0e")
        self.irreps_edge_attr = o3.Irreps.spherical_harmonics(lmax)
        self.irreps_out = o3.Irreps("0e")

        self.radial = BesselBasis(max_radius, number_of_basis)

        act = {
            1: torch.nn.functional.silu,
            -1: torch.tanh,
        }
        act_gates = {
            1: torch.sigmoid,
            -1: torch.tanh,
        }

        self.layers = torch.nn.ModuleList()

        irreps = self.irreps_in
        for _ in range(layers):
            irreps_scalars = o3.Irreps(
                [(mul, ir) for mul, ir in self.irreps_hidden if ir.l == 0 and tp_path_exists(irreps, self.irreps_edge_attr, ir)]
            )
            irreps_gated = o3.Irreps(
                [(mul, ir) for mul, ir in self.irreps_hidden if ir.l > 0 and tp_path_exists(irreps, self.irreps_edge_attr, ir)]
            )
            ir = "0e" if tp_path_exists(irreps, self.irreps_edge_attr, "0e") else "0o"
            irreps_gates = o3.Irreps([(mul, ir) for mul, _ in irreps_gated])

            gate = Gate(
                irreps_scalars,
                [act[ir.p] for _, ir in irreps_scalars],  # scalar
                irreps_gates,
                [act_gates[ir.p] for _, ir in irreps_gates],  # gates (scalars)
                irreps_gated,  # gated tensors
            )
            conv = Convolution(
                irreps,
                self.irreps_node_attr,
                self.irreps_edge_attr,
                gate.irreps_in,
                number_of_basis,
                radial_layers,
                radial_neurons,
                num_neighbors,
            )
            irreps = gate.irreps_out
            self.layers.append(Compose(conv, gate))

        self.layers.append(
            Convolution(
                irreps,
                self.irreps_node_attr,
                self.irreps_edge_attr,
                self.irreps_out,
                number_of_basis,
                radial_layers,
                radial_neurons,
                num_neighbors,
            )
        )
        self.register_buffer("atomic_energy_shift", torch.zeros(num_species))

    def preprocess(self, data: Dict[str, torch.Tensor]):
        if "batch" in data:
            batch = data["batch"]
        else:
            batch = data["pos"].new_zeros(data["pos"].shape[0], dtype=torch.long)

        if "edge_index" in data:
            edge_src = data["edge_index"][0]  # edge source
            edge_dst = data["edge_index"][1]  # edge destination
        else:
            edge_index = radius_graph(data["pos"], self.max_radius, batch, max_num_neighbors=self.max_num_neighbors)
            edge_src = edge_index[0]
            edge_dst = edge_index[1]

        edge_vec = data["pos"][edge_src] - data["pos"][edge_dst]
        return batch, edge_src, edge_dst, edge_vec

    def forward(self, data: Dict[str, torch.Tensor], compute_forces: bool = True) -> Dict[str, torch.Tensor]:
        if compute_forces:
            data["pos"].requires_grad_(True)
        batch, edge_src, edge_dst, edge_vec = self.preprocess(data)
        species = data["species"]
        node_attr = data["pos"].new_ones(data["pos"].shape[0], 1)
        node_features = torch.nn.functional.one_hot(species, self.num_species).to(data["pos"].dtype)

        edge_sh = o3.spherical_harmonics(self.irreps_edge_attr, edge_vec, True, normalization="component")
        edge_length = edge_vec.norm(dim=1)
        edge_length_embedded = self.radial(edge_length) * polynomial_cutoff(edge_length, self.max_radius).unsqueeze(-1)

        x = node_features
        for lay in self.layers:
            x = lay(x, node_attr, edge_src, edge_dst, edge_sh, edge_length_embedded)

        atomic_energy = x.squeeze(-1) + self.atomic_energy_shift[species]
        num_graphs = int(batch.max()) + 1 if batch.numel() > 0 else 1
        energy = scatter(atomic_energy, batch, dim=0, dim_size=num_graphs)
        out = {"energy": energy, "atomic_energy": atomic_energy}
        if compute_forces:
            grad = torch.autograd.grad(
                [energy.sum()],
                [data["pos"]],
                create_graph=self.training,
            )[0]
            out["forces"] = -grad
        return out


def build_model(config: Dict[str, Union[int, float, str]], device: Optional[torch.device] = None) -> GatePointsPotential:
    model = GatePointsPotential(
        num_species=int(config["num_species"]),
        irreps_hidden=str(config.get("irreps_hidden", "32x0e + 16x1o + 8x2e")),
        lmax=int(config.get("lmax", 2)),
        layers=int(config.get("layers", 3)),
        max_radius=float(config.get("r_max", 5.0)),
        number_of_basis=int(config.get("num_basis", 8)),
        num_neighbors=float(config.get("avg_num_neighbors", 20.0)),
    )
    if device is not None:
        model = model.to(device)
    return model
