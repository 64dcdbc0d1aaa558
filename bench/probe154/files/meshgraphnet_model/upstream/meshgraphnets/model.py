"""Encode-process-decode graph network for mesh-based simulation.

PyTorch re-implementation of the MeshGraphNets cloth / cylinder-flow model.
Mesh edges are stored as a `torch_sparse.SparseTensor` so that the processor
can use CSR message passing; edge -> node aggregation uses torch_scatter.
"""
import enum
import functools
import logging

import torch
import torch.nn as nn
import torch_scatter
from torch_sparse import SparseTensor

from .normalization import Normalizer

log = logging.getLogger(__name__)


class NodeType(enum.IntEnum):
    NORMAL = 0
    OBSTACLE = 1
    AIRFOIL = 2
    HANDLE = 3
    INFLOW = 4
    OUTFLOW = 5
    WALL_BOUNDARY = 6
    SIZE = 9


def build_mlp(in_size, hidden_size, out_size, num_layers=2, layer_norm=True):
    layers = [nn.Linear(in_size, hidden_size), nn.ReLU()]
    for _ in range(num_layers - 1):
        layers += [nn.Linear(hidden_size, hidden_size), nn.ReLU()]
    layers.append(nn.Linear(hidden_size, out_size))
    if layer_norm:
        layers.append(nn.LayerNorm(out_size))
    return nn.Sequential(*layers)


def triangles_to_edges(faces):
    """Computes mesh edges from triangles (both directions, deduplicated)."""
    edges = torch.cat((faces[:, 0:2], faces[:, 1:3],
                       torch.stack((faces[:, 2], faces[:, 0]), dim=1)), dim=0)
    receivers, _ = torch.min(edges, dim=1)
    senders, _ = torch.max(edges, dim=1)
    packed_edges = torch.stack((senders, receivers), dim=1)
    unique_edges = torch.unique(packed_edges, return_inverse=False, return_counts=False, dim=0)
    senders, receivers = torch.unbind(unique_edges, dim=1)
    senders = senders.to(torch.int64)
    receivers = receivers.to(torch.int64)
    two_way = (torch.cat((senders, receivers), dim=0), torch.cat((receivers, senders), dim=0))
    return two_way


class GraphNetBlock(nn.Module):
    """Multi-edge-set message passing block with residual connections."""

    def __init__(self, latent_size, num_layers=2, aggr="sum"):
        super().__init__()
        self.edge_mlp = build_mlp(3 * latent_size, latent_size, latent_size, num_layers)
        self.node_mlp = build_mlp(2 * latent_size, latent_size, latent_size, num_layers)
        self.aggr = aggr

    def _update_edges(self, node_feat, edge_feat, senders, receivers):
        sender_feat = torch.index_select(node_feat, 0, senders)
        receiver_feat = torch.index_select(node_feat, 0, receivers)
        return self.edge_mlp(torch.cat([sender_feat, receiver_feat, edge_feat], dim=-1))

    def _update_nodes(self, node_feat, edge_feat, receivers):
        num_nodes = node_feat.shape[0]
        if self.aggr == "sum":
            agg = torch_scatter.scatter_add(edge_feat, receivers, dim=0, dim_size=num_nodes)
        elif self.aggr == "max":
            agg = torch_scatter.scatter_max(edge_feat, receivers, dim=0, dim_size=num_nodes)[0]
        else:
            agg = torch_scatter.scatter_mean(edge_feat, receivers, dim=0, dim_size=num_nodes)
        return self.node_mlp(torch.cat([node_feat, agg], dim=-1))

    def forward(self, node_feat, edge_feat, senders, receivers):
        new_edge = self._update_edges(node_feat, edge_feat, senders, receivers)
        new_node = self._update_nodes(node_feat, new_edge, receivers)
        return node_feat + new_node, edge_feat + new_edge


class LaplacianSmoother(nn.Module):
    """Optional smoothing of decoded accelerations with the (row-normalised)
    mesh adjacency; keeps high-frequency noise down on coarse cloth meshes."""

    def __init__(self, alpha=0.1):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, senders, receivers, num_nodes):
        adj = SparseTensor(row=receivers, col=senders,
                           sparse_sizes=(num_nodes, num_nodes))
        deg = adj.sum(dim=1).clamp(min=1).unsqueeze(-1)
        smoothed = adj.matmul(x) / deg
        return (1 - self.alpha) * x + self.alpha * smoothed


class EncodeProcessDecode(nn.Module):
    def __init__(self, node_in, edge_in, out_size, latent_size=128,
                 message_passing_steps=15, aggr="sum", smooth=False):
        super().__init__()
        self.node_encoder = build_mlp(node_in, latent_size, latent_size)
        self.edge_encoder = build_mlp(edge_in, latent_size, latent_size)
        self.processor = nn.ModuleList(
            [GraphNetBlock(latent_size, aggr=aggr) for _ in range(message_passing_steps)])
        self.decoder = build_mlp(latent_size, latent_size, out_size, layer_norm=False)
        self.smoother = LaplacianSmoother() if smooth else None

    def forward(self, node_x, edge_x, senders, receivers):
        h_n = self.node_encoder(node_x)
        h_e = self.edge_encoder(edge_x)
        for block in self.processor:
            h_n, h_e = block(h_n, h_e, senders, receivers)
        out = self.decoder(h_n)
        if self.smoother is not None:
            out = self.smoother(out, senders, receivers, node_x.shape[0])
        return out


class ClothModel(nn.Module):
    """Predicts per-node accelerations for the flag_simple / sphere_simple datasets."""

    def __init__(self, latent_size=128, steps=15, device=None):
        super().__init__()
        self.device = device or (torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu"))
        self._output_normalizer = Normalizer(size=3, name="output_normalizer")
        self._node_normalizer = Normalizer(size=3 + NodeType.SIZE, name="node_normalizer")
        self._edge_normalizer = Normalizer(size=7, name="edge_normalizer")
        self.learned_model = EncodeProcessDecode(
            node_in=3 + NodeType.SIZE, edge_in=7, out_size=3,
            latent_size=latent_size, message_passing_steps=steps)

    def _build_graph(self, inputs, is_training):
        world_pos = inputs["world_pos"]
        prev_world_pos = inputs["prev|world_pos"]
        node_type = inputs["node_type"]
        velocity = world_pos - prev_world_pos
        one_hot = nn.functional.one_hot(node_type[:, 0].to(torch.int64), NodeType.SIZE)
        node_features = torch.cat((velocity, one_hot.float()), dim=-1)

        senders, receivers = triangles_to_edges(inputs["cells"])
        mesh_pos = inputs["mesh_pos"]
        rel_world = world_pos[senders] - world_pos[receivers]
        rel_mesh = mesh_pos[senders] - mesh_pos[receivers]
        edge_features = torch.cat((
            rel_world, torch.norm(rel_world, dim=-1, keepdim=True),
            rel_mesh, torch.norm(rel_mesh, dim=-1, keepdim=True)), dim=-1)

        return (self._node_normalizer(node_features, is_training),
                self._edge_normalizer(edge_features, is_training),
                senders, receivers)

    def forward(self, inputs, is_training=True):
        node_x, edge_x, senders, receivers = self._build_graph(inputs, is_training)
        return self.learned_model(node_x, edge_x, senders, receivers)

    def loss(self, inputs, output):
        world_pos = inputs["world_pos"]
        prev_world_pos = inputs["prev|world_pos"]
        target_world_pos = inputs["target|world_pos"]
        cur_position = world_pos
        target_acceleration = target_world_pos - 2 * cur_position + prev_world_pos
        target_normalized = self._output_normalizer(target_acceleration, True)
        node_type = inputs["node_type"][:, 0]
        loss_mask = torch.eq(node_type, torch.tensor([NodeType.NORMAL.value], device=self.device).int())
        error = torch.sum((target_normalized - output) ** 2, dim=1)
        return torch.mean(error[loss_mask])

    @torch.no_grad()
    def predict(self, inputs):
        output = self.forward(inputs, is_training=False)
        acceleration = self._output_normalizer.inverse(output)
        cur_position = inputs["world_pos"]
        prev_position = inputs["prev|world_pos"]
        return 2 * cur_position + acceleration - prev_position

    def save_model(self, path):
        torch.save(self.state_dict(), path)

    def load_model(self, path):
        self.load_state_dict(torch.load(path, map_location=self.device))


def to_device(batch, device):
    """Moves the TFRecord-derived numpy/torch dict to the target device."""
    out = {}
    for k, v in batch.items():
        if not torch.is_tensor(v):
            v = torch.as_tensor(v)
        out[k] = v.squeeze(0).cuda(non_blocking=True) if device.type == "cuda" else v.squeeze(0)
    return out


@functools.lru_cache(maxsize=1)
def cuda_graph_safe():
    """torch_scatter ops are capturable only from 2.1 on; keep eager otherwise."""
    major, minor = (int(x) for x in torch_scatter.__version__.split(".")[:2])
    return (major, minor) >= (2, 1)
