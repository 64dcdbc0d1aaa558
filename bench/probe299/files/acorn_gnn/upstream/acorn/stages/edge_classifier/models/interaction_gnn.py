# Copyright (C) 2023 CERN for the benefit of the ATLAS collaboration

# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at

#     http://www.apache.org/licenses/LICENSE-2.0

# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint
from torch_scatter import scatter_add, scatter_mean, scatter_max

from acorn.utils import make_mlp
from ..edge_classifier_stage import EdgeClassifierStage


class InteractionGNN(EdgeClassifierStage):
    """
    An interaction network class
    """

    def __init__(self, hparams):
        super().__init__(hparams)
        """
        Initialise the Lightning Module that can scan over different GNN training regimes
        """

        hparams["batchnorm"] = False if "batchnorm" not in hparams else hparams["batchnorm"]
        hparams["output_activation"] = None if "output_activation" not in hparams else hparams["output_activation"]
        hparams["edge_net_recurrent"] = True if "edge_net_recurrent" not in hparams else hparams["edge_net_recurrent"]
        hparams["node_net_recurrent"] = True if "node_net_recurrent" not in hparams else hparams["node_net_recurrent"]
        hparams["checkpointing"] = False if "checkpointing" not in hparams else hparams["checkpointing"]

        # Define the dataset to be used, if not using the default
        self.save_hyperparameters(hparams)

        self.setup_layer_sizes()

        # node encoder
        self.node_encoder = make_mlp(
            input_size=len(hparams["node_features"]),
            sizes=[hparams["hidden"]] * hparams["n_node_net_layers"],
            output_activation=hparams["output_activation"],
            hidden_activation=hparams["hidden_activation"],
            layer_norm=hparams["layernorm"],
            batch_norm=hparams["batchnorm"],
        )

        # edge encoder
        if "edge_features" in hparams and len(hparams["edge_features"]) != 0:
            self.edge_encoder = make_mlp(
                input_size=len(hparams["edge_features"]),
                sizes=[hparams["hidden"]] * hparams["n_edge_net_layers"],
                output_activation=hparams["output_activation"],
                hidden_activation=hparams["hidden_activation"],
                layer_norm=hparams["layernorm"],
                batch_norm=hparams["batchnorm"],
            )
        else:
            self.edge_encoder = make_mlp(
                input_size=2 * hparams["hidden"],
                sizes=[hparams["hidden"]] * hparams["n_edge_net_layers"],
                output_activation=hparams["output_activation"],
                hidden_activation=hparams["hidden_activation"],
                layer_norm=hparams["layernorm"],
                batch_norm=hparams["batchnorm"],
            )

        # edge network
        if hparams["edge_net_recurrent"]:
            self.edge_network = make_mlp(
                input_size=3 * hparams["hidden"],
                sizes=[hparams["hidden"]] * hparams["n_edge_net_layers"],
                output_activation=hparams["output_activation"],
                hidden_activation=hparams["hidden_activation"],
                layer_norm=hparams["layernorm"],
                batch_norm=hparams["batchnorm"],
            )
        else:
            self.edge_network = nn.ModuleList(
                [
                    make_mlp(
                        input_size=3 * hparams["hidden"],
                        sizes=[hparams["hidden"]] * hparams["n_edge_net_layers"],
                        output_activation=hparams["output_activation"],
                        hidden_activation=hparams["hidden_activation"],
                        layer_norm=hparams["layernorm"],
                        batch_norm=hparams["batchnorm"],
                    )
                    for i in range(hparams["n_graph_iters"])
                ]
            )

        # node network
        if hparams["node_net_recurrent"]:
            self.node_network = make_mlp(
                input_size=self.network_input_size,
                sizes=[hparams["hidden"]] * hparams["n_node_net_layers"],
                output_activation=hparams["output_activation"],
                hidden_activation=hparams["hidden_activation"],
                layer_norm=hparams["layernorm"],
                batch_norm=hparams["batchnorm"],
            )
        else:
            self.node_network = nn.ModuleList(
                [
                    make_mlp(
                        input_size=self.network_input_size,
                        sizes=[hparams["hidden"]] * hparams["n_node_net_layers"],
                        output_activation=hparams["output_activation"],
                        hidden_activation=hparams["hidden_activation"],
                        layer_norm=hparams["layernorm"],
                        batch_norm=hparams["batchnorm"],
                    )
                    for i in range(hparams["n_graph_iters"])
                ]
            )

        # edge decoder
        self.edge_decoder = make_mlp(
            input_size=hparams["hidden"],
            sizes=[hparams["hidden"]] * hparams["n_edge_decoder_layers"],
            output_activation=hparams["output_activation"],
            hidden_activation=hparams["hidden_activation"],
            layer_norm=hparams["layernorm"],
            batch_norm=hparams["batchnorm"],
        )

        # edge output transform layer
        self.edge_output_transform = make_mlp(
            input_size=hparams["hidden"],
            sizes=[hparams["hidden"], 1],
            output_activation=None,
            hidden_activation=hparams["hidden_activation"],
            layer_norm=hparams["layernorm"],
            batch_norm=hparams["batchnorm"],
        )

    def message_step(self, x, start, end, e, i):
        # Compute new node features
        edge_messages = torch.cat(
            [
                self.aggregation(e, end, x.shape[0]),
                self.aggregation(e, start, x.shape[0]),
            ],
            dim=-1,
        )
        node_inputs = torch.cat([x, edge_messages], dim=-1)

        if self.hparams["node_net_recurrent"]:
            x_out = self.node_network(node_inputs)
        else:
            x_out = self.node_network[i](node_inputs)

        # Compute new edge features
        edge_inputs = torch.cat([x_out[start], x_out[end], e], dim=-1)
        if self.hparams["edge_net_recurrent"]:
            e_out = self.edge_network(edge_inputs)
        else:
            e_out = self.edge_network[i](edge_inputs)

        return x_out, e_out

    def output_step(self, x, start, end, e):
        classifier_inputs = torch.cat([x[start], x[end], e], dim=1)
        classifier_output = self.output_edge_classifier(classifier_inputs).squeeze(-1)

        if "undirected" in self.hparams and self.hparams["undirected"]:
            classifier_output = torch.mean(classifier_output.view(2, -1), dim=0)

        return classifier_output

    def forward(self, batch, **kwargs):
        x = torch.stack([batch[feature] for feature in self.hparams["node_features"]], dim=-1).float()
        start, end = batch.edge_index

        # Encode the graph features into the hidden space
        x.requires_grad = True
        if self.hparams["checkpointing"]:
            x = checkpoint(self.node_encoder, x, use_reentrant=False)
        else:
            x = self.node_encoder(x)

        if "edge_features" in self.hparams and len(self.hparams["edge_features"]) != 0:
            e = torch.stack([batch[feature] for feature in self.hparams["edge_features"]], dim=-1).float()
            e = self.edge_encoder(e)
        else:
            e = self.edge_encoder(torch.cat([x[start], x[end]], dim=1))

        # Loop over iterations of edge and node networks
        for i in range(self.hparams["n_graph_iters"]):
            if self.hparams["checkpointing"]:
                x, e = checkpoint(self.message_step, x, start, end, e, i, use_reentrant=False)
            else:
                x, e = self.message_step(x, start, end, e, i)

        e = self.edge_decoder(e)
        return self.edge_output_transform(e).squeeze(-1)

    def setup_layer_sizes(self):
        if self.hparams["aggregation"] == "sum_max":
            self.network_input_size = 5 * self.hparams["hidden"]
        elif self.hparams["aggregation"] in ["sum", "mean", "max"]:
            self.network_input_size = 3 * self.hparams["hidden"]
        else:
            raise ValueError("Aggregation type not recognised")

    def aggregation(self, e, idx, num_nodes):
        if self.hparams["aggregation"] == "sum":
            return scatter_add(e, idx, dim=0, dim_size=num_nodes)
        elif self.hparams["aggregation"] == "mean":
            return scatter_mean(e, idx, dim=0, dim_size=num_nodes)
        elif self.hparams["aggregation"] == "max":
            return scatter_max(e, idx, dim=0, dim_size=num_nodes)[0]
        elif self.hparams["aggregation"] == "sum_max":
            return torch.cat(
                [
                    scatter_add(e, idx, dim=0, dim_size=num_nodes),
                    scatter_max(e, idx, dim=0, dim_size=num_nodes)[0],
                ],
                dim=-1,
            )


class InteractionGNNWithMemoryLog(InteractionGNN):
    """
    Same model, but logs the peak GPU memory of every training step (used for the memory/throughput
    plots of the CTD proceedings).
    """

    def on_train_batch_start(self, batch, batch_idx):
        if torch.cuda.is_available():
            torch.cuda.reset_peak_memory_stats(self.device)

    def on_train_batch_end(self, outputs, batch, batch_idx):
        if torch.cuda.is_available() and self.device.type == "cuda":
            peak = torch.cuda.max_memory_allocated(self.device) / 1024**3
            self.log("peak_gpu_mem_gb", peak, on_step=True, on_epoch=False, batch_size=1)
