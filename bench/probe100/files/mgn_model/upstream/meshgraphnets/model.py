"""MeshGraphNets (Pfaff et al., 2021) encode-process-decode model, PyTorch port.

Node / edge updates use torch_scatter for the segment reductions. Mesh-space
edges are aggregated with a sum; world-space (collision) edges optionally use
a max aggregation, which is what the cloth and deforming-plate models use.
"""

import collections
import enum
from typing import Callable, List, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch_scatter import scatter_add, scatter_max, scatter_mean

EdgeSet = collections.namedtuple("EdgeSet", ["name", "features", "senders", "receivers"])
MultiGraph = collections.namedtuple("Graph", ["node_features", "edge_sets"])


class NodeType(enum.IntEnum):
    NORMAL = 0
    OBSTACLE = 1
    AIRFOIL = 2
    HANDLE = 3
    INFLOW = 4
    OUTFLOW = 5
    WALL_BOUNDARY = 6
    SIZE = 9


class Normalizer(nn.Module):
    """Feature normalizer that accumulates statistics online."""

    def __init__(self, size, name, max_accumulations=10 ** 6, std_epsilon=1e-8, device="cuda"):
        super().__init__()
        self.name = name
        self._max_accumulations = max_accumulations
        self._std_epsilon = torch.tensor(std_epsilon, dtype=torch.float32, requires_grad=False, device=device)
        self._acc_count = torch.tensor(0, dtype=torch.float32, requires_grad=False, device=device)
        self._num_accumulations = torch.tensor(0, dtype=torch.float32, requires_grad=False, device=device)
        self._acc_sum = torch.zeros((1, size), dtype=torch.float32, requires_grad=False, device=device)
        self._acc_sum_squared = torch.zeros((1, size), dtype=torch.float32, requires_grad=False, device=device)

    def forward(self, batched_data, accumulate=True):
        """Normalizes input data and accumulates statistics."""
        if accumulate:
            # stop accumulating after a million updates, to prevent accuracy issues
            if self._num_accumulations < self._max_accumulations:
                self._accumulate(batched_data.detach())
        return (batched_data - self._mean()) / self._std_with_epsilon()

    def inverse(self, normalized_batch_data):
        """Inverse transformation of the normalizer."""
        return normalized_batch_data * self._std_with_epsilon() + self._mean()

    def _accumulate(self, batched_data):
        """Function to perform the accumulation of the batch_data statistics."""
        count = batched_data.shape[0]
        data_sum = torch.sum(batched_data, axis=0, keepdims=True)
        squared_data_sum = torch.sum(batched_data ** 2, axis=0, keepdims=True)

        self._acc_sum += data_sum
        self._acc_sum_squared += squared_data_sum
        self._acc_count += count
        self._num_accumulations += 1

    def _mean(self):
        safe_count = torch.maximum(self._acc_count, torch.tensor(1.0, device=self._acc_count.device))
        return self._acc_sum / safe_count

    def _std_with_epsilon(self):
        safe_count = torch.maximum(self._acc_count, torch.tensor(1.0, device=self._acc_count.device))
        std = torch.sqrt(self._acc_sum_squared / safe_count - self._mean() ** 2)
        return torch.maximum(std, self._std_epsilon)

    def get_variable(self):
        return {
            "_max_accumulations": self._max_accumulations,
            "_std_epsilon": self._std_epsilon,
            "_acc_count": self._acc_count,
            "_num_accumulations": self._num_accumulations,
            "_acc_sum": self._acc_sum,
            "_acc_sum_squared": self._acc_sum_squared,
            "name": self.name,
        }


def build_mlp(in_size: int, hidden_size: int, out_size: int, num_layers: int = 2, layer_norm: bool = True) -> nn.Module:
    layers: List[nn.Module] = [nn.Linear(in_size, hidden_size), nn.ReLU()]
    for _ in range(num_layers - 1):
        layers += [nn.Linear(hidden_size, hidden_size), nn.ReLU()]
    layers.append(nn.Linear(hidden_size, out_size))
    if layer_norm:
        layers.append(nn.LayerNorm(out_size))
    return nn.Sequential(*layers)


class GraphNetBlock(nn.Module):
    """Multi-Edge Interaction Network with residual connections."""

    def __init__(self, latent_size: int, edge_set_names: List[str], max_aggr_sets=("world_edges",)):
        super().__init__()
        self.edge_models = nn.ModuleDict({name: build_mlp(3 * latent_size, latent_size, latent_size) for name in edge_set_names})
        self.node_model = build_mlp(latent_size * (1 + len(edge_set_names)), latent_size, latent_size)
        self.max_aggr_sets = set(max_aggr_sets)

    def _update_edge_features(self, node_features, edge_set):
        sender_features = torch.index_select(node_features, 0, edge_set.senders)
        receiver_features = torch.index_select(node_features, 0, edge_set.receivers)
        features = torch.cat([sender_features, receiver_features, edge_set.features], dim=-1)
        return self.edge_models[edge_set.name](features)

    def _update_node_features(self, node_features, edge_sets):
        num_nodes = node_features.shape[0]
        features = [node_features]
        for edge_set in edge_sets:
            if edge_set.name in self.max_aggr_sets:
                agg, _ = scatter_max(edge_set.features, edge_set.receivers, dim=0, dim_size=num_nodes)
            else:
                agg = scatter_add(edge_set.features, edge_set.receivers, dim=0, dim_size=num_nodes)
            features.append(agg)
        return self.node_model(torch.cat(features, dim=-1))

    def forward(self, graph: MultiGraph) -> MultiGraph:
        new_edge_sets = []
        for edge_set in graph.edge_sets:
            updated = self._update_edge_features(graph.node_features, edge_set)
            new_edge_sets.append(edge_set._replace(features=updated))

        new_node_features = self._update_node_features(graph.node_features, new_edge_sets)

        # residual connections
        new_node_features = new_node_features + graph.node_features
        new_edge_sets = [
            es._replace(features=es.features + old.features) for es, old in zip(new_edge_sets, graph.edge_sets)
        ]
        return MultiGraph(new_node_features, new_edge_sets)


class EncodeProcessDecode(nn.Module):
    def __init__(self, node_in: int, edge_in: dict, output_size: int, latent_size: int = 128, message_passing_steps: int = 15):
        super().__init__()
        self.node_encoder = build_mlp(node_in, latent_size, latent_size)
        self.edge_encoders = nn.ModuleDict({name: build_mlp(size, latent_size, latent_size) for name, size in edge_in.items()})
        self.processor = nn.ModuleList(
            [GraphNetBlock(latent_size, list(edge_in.keys())) for _ in range(message_passing_steps)]
        )
        self.decoder = build_mlp(latent_size, latent_size, output_size, layer_norm=False)

    def forward(self, graph: MultiGraph) -> torch.Tensor:
        latent = MultiGraph(
            self.node_encoder(graph.node_features),
            [es._replace(features=self.edge_encoders[es.name](es.features)) for es in graph.edge_sets],
        )
        for block in self.processor:
            latent = block(latent)
        return self.decoder(latent.node_features)


class ClothModel(nn.Module):
    """Predicts per-node acceleration of a cloth mesh."""

    def __init__(self, output_size: int = 3, message_passing_steps: int = 15, use_world_edges: bool = True):
        super().__init__()
        self._output_normalizer = Normalizer(size=output_size, name="output_normalizer")
        self._node_normalizer = Normalizer(size=3 + NodeType.SIZE, name="node_normalizer")
        self._mesh_edge_normalizer = Normalizer(size=7, name="mesh_edge_normalizer")  # 2D coord + 3D coord + 2*length = 7
        self._world_edge_normalizer = Normalizer(size=4, name="world_edge_normalizer")
        self.use_world_edges = use_world_edges
        edge_in = {"mesh_edges": 7}
        if use_world_edges:
            edge_in["world_edges"] = 4
        self.learned_model = EncodeProcessDecode(node_in=3 + NodeType.SIZE, edge_in=edge_in, output_size=output_size,
                                                 message_passing_steps=message_passing_steps)

    def _build_graph(self, inputs, is_training):
        world_pos = inputs["world_pos"]
        prev_world_pos = inputs["prev|world_pos"]
        node_type = inputs["node_type"]
        velocity = world_pos - prev_world_pos
        one_hot_node_type = F.one_hot(node_type[:, 0].to(torch.int64), NodeType.SIZE)
        node_features = torch.cat((velocity, one_hot_node_type), dim=-1)

        senders, receivers = inputs["mesh_senders"], inputs["mesh_receivers"]
        relative_world_pos = world_pos[senders] - world_pos[receivers]
        relative_mesh_pos = inputs["mesh_pos"][senders] - inputs["mesh_pos"][receivers]
        mesh_edge_features = torch.cat(
            (relative_world_pos, torch.norm(relative_world_pos, dim=-1, keepdim=True),
             relative_mesh_pos, torch.norm(relative_mesh_pos, dim=-1, keepdim=True)), dim=-1)
        edge_sets = [EdgeSet("mesh_edges", self._mesh_edge_normalizer(mesh_edge_features, is_training), senders, receivers)]

        if self.use_world_edges:
            ws, wr = inputs["world_senders"], inputs["world_receivers"]
            rel = world_pos[ws] - world_pos[wr]
            world_edge_features = torch.cat((rel, torch.norm(rel, dim=-1, keepdim=True)), dim=-1)
            edge_sets.append(EdgeSet("world_edges", self._world_edge_normalizer(world_edge_features, is_training), ws, wr))

        return MultiGraph(self._node_normalizer(node_features, is_training), edge_sets)

    def forward(self, inputs, is_training=True):
        graph = self._build_graph(inputs, is_training=is_training)
        return self.learned_model(graph)

    def loss(self, inputs, prediction):
        world_pos = inputs["world_pos"]
        target_acc = inputs["target|world_pos"] - 2 * world_pos + inputs["prev|world_pos"]
        target_normalized = self._output_normalizer(target_acc)
        loss_mask = (inputs["node_type"][:, 0] == NodeType.NORMAL)
        error = torch.sum((target_normalized - prediction) ** 2, dim=1)
        return torch.mean(error[loss_mask])

    def per_graph_error(self, error: torch.Tensor, graph_ids: torch.Tensor) -> torch.Tensor:
        """Mean per-node error for each graph of a batch (for logging)."""
        return scatter_mean(error, graph_ids, dim=0)

    def integrate(self, inputs, per_node_network_output):
        acceleration = self._output_normalizer.inverse(per_node_network_output)
        cur_position = inputs["world_pos"]
        prev_position = inputs["prev|world_pos"]
        return 2 * cur_position + acceleration - prev_position
