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

import logging
import warnings

import numpy as np
import scipy as sp
import torch
from torch_geometric.nn import radius

try:
    import frnn

    FRNN_AVAILABLE = True
except ImportError:
    FRNN_AVAILABLE = False
    logging.warning("FRNN is not available, install it at https://github.com/murnanedaniel/FRNN. Using PyG radius instead.")

try:
    import faiss

    FAISS_AVAILABLE = True
except ImportError:
    FAISS_AVAILABLE = False

try:
    import cudf
    import cugraph

    CUGRAPH_AVAILABLE = True
except ImportError:
    CUGRAPH_AVAILABLE = False

device = "cuda" if torch.cuda.is_available() else "cpu"


def make_mlp(
    input_size,
    sizes,
    hidden_activation="ReLU",
    output_activation=None,
    layer_norm=False,  # TODO : change name to hidden_layer_norm while ensuring backward compatibility
    output_layer_norm=False,
    batch_norm=False,  # TODO : change name to hidden_batch_norm while ensuring backward compatibility
    output_batch_norm=False,
    input_dropout=0,
    hidden_dropout=0,
    track_running_stats=False,
):
    """Construct an MLP with specified fully-connected layers."""
    hidden_activation = getattr(torch.nn, hidden_activation)
    if output_activation is not None:
        output_activation = getattr(torch.nn, output_activation)
    layers = []
    n_layers = len(sizes)
    sizes = [input_size] + sizes
    # Hidden layers
    for i in range(n_layers - 1):
        if i == 0 and input_dropout > 0:
            layers.append(torch.nn.Dropout(input_dropout))
        layers.append(torch.nn.Linear(sizes[i], sizes[i + 1]))
        if layer_norm:  # hidden_layer_norm
            layers.append(torch.nn.LayerNorm(sizes[i + 1], elementwise_affine=False))
        if batch_norm:  # hidden_batch_norm
            layers.append(
                torch.nn.BatchNorm1d(
                    sizes[i + 1],
                    eps=6e-05,
                    track_running_stats=track_running_stats,
                    affine=True,
                )  # TODO : Set BatchNorm and LayerNorm parameters in config file ?
            )
        layers.append(hidden_activation())
        if hidden_dropout > 0:
            layers.append(torch.nn.Dropout(hidden_dropout))
    # Final layer
    layers.append(torch.nn.Linear(sizes[-2], sizes[-1]))
    if output_activation is not None:
        if output_layer_norm:
            layers.append(torch.nn.LayerNorm(sizes[-1], elementwise_affine=False))
        if output_batch_norm:
            layers.append(
                torch.nn.BatchNorm1d(
                    sizes[-1],
                    eps=6e-05,
                    track_running_stats=track_running_stats,
                    affine=True,
                )  # TODO : Set BatchNorm and LayerNorm parameters in config file ?
            )
        layers.append(output_activation())
    return torch.nn.Sequential(*layers)


def build_edges(
    query,
    database,
    indices=None,
    r_max=1.0,
    k_max=10,
    return_indices=False,
    backend="FRNN",
):
    # Type hint
    if backend == "FRNN" and FRNN_AVAILABLE:
        dists, idxs, nn, grid = frnn.frnn_grid_points(
            points1=query.unsqueeze(0),
            points2=database.unsqueeze(0),
            lengths1=None,
            lengths2=None,
            K=k_max,
            r=r_max,
            grid=None,
            return_nn=False,
            return_sorted=True,
        )

        idxs = idxs.squeeze().int()
        ind = torch.Tensor.repeat(
            torch.arange(idxs.shape[0], device=query.device), (idxs.shape[1], 1), 1
        ).T.int()
        positive_idxs = idxs >= 0
        edge_list = torch.stack([ind[positive_idxs], idxs[positive_idxs]]).long()

    elif backend == "FAISS" and FAISS_AVAILABLE:
        # exact brute-force search on the GPU with faiss
        res = faiss.StandardGpuResources()
        D, I = faiss.knn_gpu(res, query, database, k_max, metric=faiss.METRIC_L2)
        ind = torch.arange(I.shape[0], device=query.device).unsqueeze(1).expand(I.shape)
        positive_idxs = D <= r_max**2
        edge_list = torch.stack([ind[positive_idxs], I[positive_idxs]]).long()

    else:
        edge_list = radius(database, query, r=r_max, max_num_neighbors=k_max)

    # Reset indices subset to correct global index
    if indices is not None:
        edge_list[0] = indices[edge_list[0]]

    # Remove self-loops
    edge_list = edge_list[:, edge_list[0] != edge_list[1]]

    if return_indices:
        return edge_list, dists, idxs, ind
    else:
        return edge_list


def graph_intersection(input_pred_graph, input_truth_graph, return_y_pred=True, return_y_truth=False, return_pred_to_truth=False, return_truth_to_pred=False, unique_pred=True, unique_truth=True):
    """
    An updated version of the graph intersection function, which is around 25x faster than the
    Scipy implementation (on GPU). Takes a prediction graph and a truth graph, assumed to have unique entries.
    If unique_pred or unique_truth is False, the function will first find the unique entries in the input graphs, and return the updated edge lists.
    """

    if not unique_pred:
        input_pred_graph = torch.unique(input_pred_graph, dim=1)
    if not unique_truth:
        input_truth_graph = torch.unique(input_truth_graph, dim=1)

    unique_edges, inverse = torch.unique(torch.cat([input_pred_graph, input_truth_graph], dim=1), dim=1, sorted=False, return_inverse=True, return_counts=False)

    inverse_pred_map = torch.ones_like(unique_edges[1]) * -1
    inverse_pred_map[inverse[: input_pred_graph.shape[1]]] = torch.arange(input_pred_graph.shape[1], device=unique_edges.device)

    inverse_truth_map = torch.ones_like(unique_edges[1]) * -1
    inverse_truth_map[inverse[input_pred_graph.shape[1]:]] = torch.arange(input_truth_graph.shape[1], device=unique_edges.device)

    pred_to_truth = inverse_truth_map[inverse][: input_pred_graph.shape[1]]
    truth_to_pred = inverse_pred_map[inverse][input_pred_graph.shape[1]:]

    return_tensors = []

    if not unique_pred:
        return_tensors.append(input_pred_graph)
    if not unique_truth:
        return_tensors.append(input_truth_graph)
    if return_y_pred:
        y_pred = pred_to_truth >= 0
        return_tensors.append(y_pred)
    if return_y_truth:
        y_truth = truth_to_pred >= 0
        return_tensors.append(y_truth)
    if return_pred_to_truth:
        return_tensors.append(pred_to_truth)
    if return_truth_to_pred:
        return_tensors.append(truth_to_pred)

    return return_tensors if len(return_tensors) > 1 else return_tensors[0]


def graph_intersection_scipy(pred_graph, truth_graph):
    """Legacy CPU version, kept for validation of the fast version above."""
    array_size = max(pred_graph.max().item(), truth_graph.max().item()) + 1

    l1 = pred_graph.cpu().numpy() if torch.is_tensor(pred_graph) else pred_graph
    l2 = truth_graph.cpu().numpy() if torch.is_tensor(truth_graph) else truth_graph

    e_1 = sp.sparse.coo_matrix((np.ones(l1.shape[1]), l1), shape=(array_size, array_size)).tocsr()
    e_2 = sp.sparse.coo_matrix((np.ones(l2.shape[1]), l2), shape=(array_size, array_size)).tocsr()
    e_intersection = (e_1.multiply(e_2) - ((e_1 - e_2) > 0)).tocoo()

    new_pred_graph = torch.from_numpy(np.vstack([e_intersection.row, e_intersection.col])).long().to(device)
    y = torch.from_numpy(e_intersection.data > 0).to(device)
    return new_pred_graph, y


def get_connected_components(num_nodes, edge_index, edge_scores, score_cut):
    """
    Label the weakly connected components of the graph of edges passing the score cut.
    Uses cuGraph when the edges live on the GPU, scipy otherwise.
    """
    passing = edge_index[:, edge_scores > score_cut]

    if CUGRAPH_AVAILABLE and passing.is_cuda:
        df = cudf.DataFrame({"src": cudf.from_dlpack(torch.utils.dlpack.to_dlpack(passing[0])),
                             "dst": cudf.from_dlpack(torch.utils.dlpack.to_dlpack(passing[1]))})
        G = cugraph.Graph(directed=False)
        G.from_cudf_edgelist(df, source="src", destination="dst", renumber=False)
        labels = cugraph.connected_components(G)
        track_id = torch.full((num_nodes,), -1, dtype=torch.long, device=passing.device)
        track_id[torch.as_tensor(labels["vertex"].values, device=passing.device)] = torch.as_tensor(labels["labels"].values, device=passing.device)
        return track_id

    passing = passing.cpu().numpy()
    sparse_edges = sp.sparse.coo_matrix((np.ones(passing.shape[1]), passing), shape=(num_nodes, num_nodes))
    _, candidate_labels = sp.sparse.csgraph.connected_components(sparse_edges, directed=False, return_labels=True)
    return torch.from_numpy(candidate_labels).long()


def get_optimizers(parameters, hparams):
    """Get the optimizer and scheduler."""
    weight_decay = hparams.get("lr_weight_decay", 0.01)
    optimizer = [
        torch.optim.AdamW(
            parameters,
            lr=(hparams["lr"]),
            betas=(0.9, 0.999),
            eps=1e-08,
            amsgrad=True,
            weight_decay=weight_decay,
        )
    ]

    if "scheduler" not in hparams or hparams["scheduler"] is None or hparams["scheduler"] == "StepLR":
        scheduler = [
            {
                "scheduler": torch.optim.lr_scheduler.StepLR(
                    optimizer[0],
                    step_size=hparams["patience"],
                    gamma=hparams["factor"],
                ),
                "interval": "epoch",
                "frequency": 1,
            }
        ]
    elif hparams["scheduler"] == "ReduceLROnPlateau":
        metric_mode = hparams.get("metric_mode", "min")
        metric_to_monitor = hparams.get("metric_to_monitor", "val_loss")
        scheduler = [
            {
                "scheduler": torch.optim.lr_scheduler.ReduceLROnPlateau(
                    optimizer[0],
                    mode=metric_mode,
                    factor=hparams["factor"],
                    patience=hparams["patience"],
                    verbose=True,
                ),
                "interval": "epoch",
                "frequency": 1,
                "monitor": metric_to_monitor,
            }
        ]
    elif hparams["scheduler"] == "CosineAnnealingWarmRestarts":
        scheduler = [
            {
                "scheduler": torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(
                    optimizer[0],
                    T_0=hparams["patience"],
                    T_mult=2,
                    eta_min=1e-8,
                    last_epoch=-1,
                ),
                "interval": "epoch",
                "frequency": 1,
            }
        ]
    else:
        raise ValueError(f"Unknown scheduler: {hparams['scheduler']}")

    return optimizer, scheduler
