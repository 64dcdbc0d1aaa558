"""Edge / node update blocks of the MeshGraphNets processor.

The aggregation of edge messages onto receiver nodes uses torch_scatter, which
is considerably faster than torch_geometric's generic MessagePassing for the
~20 edges/node meshes of CylinderFlow/Airfoil. `aggr` can be switched to
"mean" or "max" for the ablations in Table 4 of the paper.
"""
import torch
import torch.nn as nn
from torch_geometric.data import Data
from torch_scatter import scatter_add, scatter_max, scatter_mean

from utils.utils import copy_geometric_data, decompose_graph


def build_mlp(in_size, hidden_size, out_size, lay_norm=True, num_hidden_layers=2, activation=nn.ReLU):
    layers = [nn.Linear(in_size, hidden_size), activation()]
    for _ in range(num_hidden_layers - 1):
        layers += [nn.Linear(hidden_size, hidden_size), activation()]
    layers.append(nn.Linear(hidden_size, out_size))
    module = nn.Sequential(*layers)
    if lay_norm:
        return nn.Sequential(module, nn.LayerNorm(normalized_shape=out_size))
    return module


def aggregate_edges(edge_attr, receivers, num_nodes, aggr="sum"):
    """Aggregate per-edge features onto their receiver nodes.

    Args:
        edge_attr: (E, F) edge features
        receivers: (E,) receiver node index of every edge
        num_nodes: number of nodes N
        aggr: "sum" | "mean" | "max"
    """
    if aggr == "sum":
        return scatter_add(edge_attr, receivers, dim=0, dim_size=num_nodes)
    if aggr == "mean":
        return scatter_mean(edge_attr, receivers, dim=0, dim_size=num_nodes)
    if aggr == "max":
        out, _argmax = scatter_max(edge_attr, receivers, dim=0, dim_size=num_nodes)
        return out
    raise ValueError(f"unknown aggregation {aggr!r}")


class EdgeBlock(nn.Module):
    """e'_ij = f_e(e_ij, v_i, v_j)"""

    def __init__(self, custom_func=None):
        super(EdgeBlock, self).__init__()
        self.net = custom_func

    def forward(self, graph):
        node_attr, edge_index, edge_attr, _ = decompose_graph(graph)
        senders_idx, receivers_idx = edge_index
        edges_to_collect = []

        senders_attr = node_attr[senders_idx]
        receivers_attr = node_attr[receivers_idx]

        edges_to_collect.append(senders_attr)
        edges_to_collect.append(receivers_attr)
        edges_to_collect.append(edge_attr)

        collected_edges = torch.cat(edges_to_collect, dim=1)

        edge_attr_ = self.net(collected_edges)  # Update

        return Data(x=node_attr, edge_attr=edge_attr_, edge_index=edge_index)


class NodeBlock(nn.Module):
    """v'_i = f_v(v_i, sum_j e'_ij)"""

    def __init__(self, custom_func=None, aggr="sum"):
        super(NodeBlock, self).__init__()
        self.net = custom_func
        self.aggr = aggr

    def forward(self, graph):
        # Decompose graph
        edge_attr = graph.edge_attr
        nodes_to_collect = []

        _, receivers_idx = graph.edge_index
        num_nodes = graph.num_nodes
        agg_received_edges = aggregate_edges(edge_attr, receivers_idx, num_nodes, self.aggr)

        nodes_to_collect.append(graph.x)
        nodes_to_collect.append(agg_received_edges)
        collected_nodes = torch.cat(nodes_to_collect, dim=-1)
        x = self.net(collected_nodes)
        return Data(x=x, edge_attr=edge_attr, edge_index=graph.edge_index)


class GnBlock(nn.Module):
    """One message-passing step with residual connections on nodes and edges."""

    def __init__(self, hidden_size=128, aggr="sum"):
        super(GnBlock, self).__init__()

        eb_input_dim = 3 * hidden_size
        nb_input_dim = 2 * hidden_size
        nb_custom_func = build_mlp(nb_input_dim, hidden_size, hidden_size)
        eb_custom_func = build_mlp(eb_input_dim, hidden_size, hidden_size)

        self.eb_module = EdgeBlock(custom_func=eb_custom_func)
        self.nb_module = NodeBlock(custom_func=nb_custom_func, aggr=aggr)

    def forward(self, graph):
        graph_last = copy_geometric_data(graph)
        graph = self.eb_module(graph)
        graph = self.nb_module(graph)
        edge_attr = graph_last.edge_attr + graph.edge_attr
        x = graph_last.x + graph.x
        return Data(x=x, edge_attr=edge_attr, edge_index=graph.edge_index)


class Encoder(nn.Module):
    def __init__(self, edge_input_size=128, node_input_size=128, hidden_size=128):
        super(Encoder, self).__init__()

        self.eb_encoder = build_mlp(edge_input_size, hidden_size, hidden_size)
        self.nb_encoder = build_mlp(node_input_size, hidden_size, hidden_size)

    def forward(self, graph):
        node_attr, _, edge_attr, _ = decompose_graph(graph)
        node_ = self.nb_encoder(node_attr)
        edge_ = self.eb_encoder(edge_attr)

        return Data(x=node_, edge_attr=edge_, edge_index=graph.edge_index)


class Decoder(nn.Module):
    def __init__(self, hidden_size=128, output_size=2):
        super(Decoder, self).__init__()
        self.decode_module = build_mlp(hidden_size, hidden_size, output_size, lay_norm=False)

    def forward(self, graph):
        return self.decode_module(graph.x)


class EncoderProcesserDecoder(nn.Module):
    def __init__(self, message_passing_num, node_input_size, edge_input_size, hidden_size=128, aggr="sum"):
        super(EncoderProcesserDecoder, self).__init__()

        self.encoder = Encoder(edge_input_size=edge_input_size, node_input_size=node_input_size, hidden_size=hidden_size)

        processer_list = []
        for _ in range(message_passing_num):
            processer_list.append(GnBlock(hidden_size=hidden_size, aggr=aggr))
        self.processer_list = nn.ModuleList(processer_list)

        self.decoder = Decoder(hidden_size=hidden_size, output_size=2)

    def forward(self, graph):
        graph = self.encoder(graph)
        for model in self.processer_list:
            graph = model(graph)
        decoded = self.decoder(graph)
        return decoded


def global_pool(x, batch, how="mean"):
    """Graph-level readout used by the drag/lift regression head."""
    if how == "mean":
        return scatter_mean(x, batch, dim=0)
    out, _ = scatter_max(x, batch, dim=0)
    return out
